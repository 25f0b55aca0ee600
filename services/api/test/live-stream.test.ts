// The live click streams end to end: clicks queued as the redirector queues them, recorded by the
// real worker, streamed by two API instances on one database and Redis (as behind a load balancer).
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClickEvent, redisKeys } from '@deeplink/core';
import { appendLiveEntry, type LiveClick } from '@deeplink/core/redis';
import { clickProducer, type ClickProducer, waitForIdle } from '@deeplink/test-kit/clicks';
import { waitUntil } from '@deeplink/test-kit/processes';
import { UA } from '@deeplink/test-kit/user-agents';
import { createWorker, type ClickWorker } from '../../worker/src/app.js';
import { createApiHarness, createLinkOf, type ApiHarness } from './harness.js';
import { openLiveStream, type OpenedStream } from './live-streams.js';

const IP = '8.8.8.8';
const LIVE_CLICK_FIELDS = ['at', 'linkId', 'platform', 'country', 'browser', 'os', 'referrer'];

let a: ApiHarness;
let b: ApiHarness;
let baseA: string;
let baseB: string;
let worker: ClickWorker;
let producer: ClickProducer;
const opened: OpenedStream[] = [];

const listen = async (harness: ApiHarness) => `http://127.0.0.1:${new URL(await harness.app.listen({ port: 0, host: '127.0.0.1' })).port}`;

beforeAll(async () => {
  a = await createApiHarness({ env: { LIVE_PING_INTERVAL_MS: '1000' } });
  b = await a.sibling();
  baseA = await listen(a);
  baseB = await listen(b);
  worker = await createWorker({ config: a.env.config, sql: a.env.sql, redis: a.env.redis, schedule: false });
  producer = clickProducer(a.env);
});
afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
});
afterAll(async () => {
  await producer?.close();
  await worker?.close();
  await b?.close();
  await a?.close();
});

const open = async (base: string, path: string, token: string, lastEventId?: string) => {
  const stream = await openLiveStream(base, path, token, lastEventId);
  opened.push(stream);
  return stream;
};

let batches = 0;
/** Queues one batch as the redirector does and waits until the worker has taken it. */
const send = async (clicks: ClickEvent[], batchId = `live-${++batches}`) => {
  await producer.add({ batchId, clicks });
  await waitForIdle(producer.queue);
  return batchId;
};
const clickOn = (linkId: string, overrides: Partial<ClickEvent> = {}): ClickEvent => ({
  linkId,
  ts: Date.now(),
  ip: IP,
  userAgent: UA.iphoneSafari,
  referrer: 'https://t.co/abc',
  ...overrides,
});
const openSlots = (userId: string) => a.env.redis.zcard(redisKeys(a.env.config.REDIS_PREFIX).liveStreams(userId));

describe('live click streams', () => {
  it('brings the clicks the worker records to streams on both instances, each scope its own', async () => {
    const owner = await a.registerUser();
    const other = await a.registerUser();
    const first = await createLinkOf(a, owner.token);
    const second = await createLinkOf(a, owner.token);
    const others = await createLinkOf(a, other.token);
    const account = await open(baseA, '/api/analytics/live', owner.token);
    expect(account.response.status).toBe(200);
    expect(account.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(account.response.headers.get('cache-control')).toBe('no-store');
    const firstOnB = await open(baseB, `/api/analytics/links/${first.id}/live`, owner.token);
    const secondOnA = await open(baseA, `/api/analytics/links/${second.id}/live`, owner.token);
    const otherAccount = await open(baseB, '/api/analytics/live', other.token);

    const now = Date.now();
    await send([
      clickOn(first.id, { ts: now - 30 }),
      clickOn(first.id, { ts: now - 20, userAgent: UA.androidChrome, referrer: '' }),
      clickOn(second.id, { ts: now - 10 }),
      clickOn(others.id, { ts: now }),
      // A bot is not a click.
      clickOn(first.id, { ts: now, userAgent: UA.googlebot }),
    ]);

    const [message] = await account.waitForMessages(1);
    expect(message!.event).toBe('clicks');
    expect(message!.data).toMatchObject({ clicks: 3, perSecond: 0.3 });
    expect(Date.parse(message!.data.at)).toBeGreaterThanOrEqual(now - 1000);
    const iphone = { platform: 'ios', country: 'US', browser: 'Mobile Safari', os: 'iOS', referrer: 't.co' };
    expect(message!.data.recent).toEqual([
      { at: new Date(now - 10).toISOString(), linkId: second.id, ...iphone },
      {
        at: new Date(now - 20).toISOString(),
        linkId: first.id,
        platform: 'android',
        country: 'US',
        browser: 'Chrome',
        os: 'Android',
        referrer: 'direct',
      },
      { at: new Date(now - 30).toISOString(), linkId: first.id, ...iphone },
    ]);

    const [onB] = await firstOnB.waitForMessages(1);
    expect(onB!.id).toBe(message!.id);
    expect(onB!.data).toMatchObject({ clicks: 2, perSecond: 0.2 });
    expect(onB!.data.recent.map((click) => click.linkId)).toEqual([first.id, first.id]);
    const [onA] = await secondOnA.waitForMessages(1);
    expect(onA!.data).toMatchObject({ clicks: 1, recent: [{ linkId: second.id }] });
    const [theirs] = await otherAccount.waitForMessages(1);
    expect(theirs!.data).toMatchObject({ clicks: 1, recent: [{ linkId: others.id }] });

    // Nothing about the visitor: no address, no agent string, no visitor hash; only the contract's fields.
    for (const stream of [account, firstOnB, secondOnA, otherAccount]) {
      for (const { raw, data } of stream.messages) {
        expect(raw).not.toContain(IP);
        expect(raw).not.toContain('Mozilla');
        expect(Object.keys(data).sort()).toEqual(['at', 'clicks', 'perSecond', 'recent']);
        for (const click of data.recent) expect(Object.keys(click)).toEqual(LIVE_CLICK_FIELDS);
      }
    }

    // A link's stream hears nothing of the account's other links.
    await send([clickOn(second.id)]);
    await secondOnA.waitForMessages(2);
    await account.waitForMessages(2);
    expect(firstOnB.messages).toHaveLength(1);
    expect(otherAccount.messages).toHaveLength(1);
  });

  it('sends nothing for a batch recorded before', async () => {
    const owner = await a.registerUser();
    const link = await createLinkOf(a, owner.token);
    const stream = await open(baseB, '/api/analytics/live', owner.token);
    const batchId = await send([clickOn(link.id)]);
    await stream.waitForMessages(1);
    // The same batch again (a redelivery) adds nothing: the next message is the next batch's.
    await send([clickOn(link.id), clickOn(link.id)], batchId);
    await send([clickOn(link.id), clickOn(link.id), clickOn(link.id)]);
    const [, next] = await stream.waitForMessages(2);
    expect(next!.data.clicks).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stream.messages).toHaveLength(2);
  });

  it("refuses another account's link as the report does, and an unknown one with 404", async () => {
    const owner = await a.registerUser();
    const other = await a.registerUser();
    const theirs = await createLinkOf(a, other.token);
    const report = await a.request({ method: 'GET', url: `/api/analytics/links/${theirs.id}`, token: owner.token });
    const stream = await open(baseA, `/api/analytics/links/${theirs.id}/live`, owner.token);
    expect(stream.response.status).toBe(report.statusCode);
    expect(stream.response.status).toBe(403);
    expect(await stream.response.json()).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    const unknown = await open(baseA, '/api/analytics/links/6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10/live', owner.token);
    expect(unknown.response.status).toBe(404);
    expect(await unknown.response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    const anonymous = await fetch(`${baseA}/api/analytics/live`);
    expect(anonymous.status).toBe(401);
    expect(await openSlots(owner.id)).toBe(0);
  });

  it('resumes from Last-Event-ID with exactly the messages missed, then live ones', async () => {
    const owner = await a.registerUser();
    const link = await createLinkOf(a, owner.token);
    const before = await open(baseA, '/api/analytics/live', owner.token);
    await send([clickOn(link.id)]);
    const [seen] = await before.waitForMessages(1);
    before.close();

    await send([clickOn(link.id), clickOn(link.id)]);
    await send([clickOn(link.id), clickOn(link.id), clickOn(link.id)]);
    const history = redisKeys(a.env.config.REDIS_PREFIX).liveClicks(owner.id);
    await waitUntil(async () => (await a.env.redis.xlen(history)) === 3, 5_000);

    const resumed = await open(baseB, '/api/analytics/live', owner.token, seen!.id);
    const missed = await resumed.waitForMessages(2);
    expect(missed.map((m) => m.data.clicks)).toEqual([2, 3]);
    // Rates count the entries before the resume point too: 1 + 2, then 1 + 2 + 3 clicks in ten seconds.
    expect(missed.map((m) => m.data.perSecond)).toEqual([0.3, 0.6]);
    await send([clickOn(link.id), clickOn(link.id), clickOn(link.id), clickOn(link.id)]);
    const all = await resumed.waitForMessages(3);
    expect(all.map((m) => m.data.clicks)).toEqual([2, 3, 4]);
    expect(new Set(all.map((m) => m.id)).size).toBe(3);
    expect(all.map((m) => m.id)).not.toContain(seen!.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resumed.messages).toHaveLength(3);
  });

  it('refuses a Last-Event-ID that is not a message id with 400 naming it', async () => {
    const owner = await a.registerUser();
    const stream = await open(baseA, '/api/analytics/live', owner.token, 'yesterday');
    expect(stream.response.status).toBe(400);
    const body = (await stream.response.json()) as { error: { details: unknown } };
    expect(body).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
    expect(JSON.stringify(body.error.details)).toContain('last-event-id');
  });

  it('answers the sixth open stream of an account, on any instance, with 429 and Retry-After', async () => {
    const owner = await a.registerUser();
    const streams = [];
    for (const base of [baseA, baseB, baseA, baseB, baseA]) streams.push(await open(base, '/api/analytics/live', owner.token));
    expect(streams.map((s) => s.response.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await open(baseB, '/api/analytics/live', owner.token);
    expect(sixth.response.status).toBe(429);
    expect(Number(sixth.response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await sixth.response.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });

    // A closed stream frees its place at once.
    streams[0]!.close();
    await waitUntil(async () => (await openSlots(owner.id)) === 4, 5_000);
    expect((await open(baseB, '/api/analytics/live', owner.token)).response.status).toBe(200);
  });

  it('pings every LIVE_PING_INTERVAL_MS', async () => {
    const owner = await a.registerUser();
    const stream = await open(baseB, '/api/analytics/live', owner.token);
    await waitUntil(() => stream.comments.includes('ping'), 5_000, { failure: 'a ping' });
  });

  it('disconnects a client that stops reading instead of buffering for it', async () => {
    const owner = await a.registerUser();
    const socket: Socket = connect(Number(new URL(baseA).port), '127.0.0.1');
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`GET /api/analytics/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\n\r\n`);
    const head = await new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(chunk.toString())));
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    socket.pause();

    // Far more than the socket buffers hold, in entries as large as the worker writes.
    const keys = redisKeys(a.env.config.REDIS_PREFIX);
    const recent: LiveClick[] = Array.from({ length: 100 }, (_, i) => ({
      at: new Date().toISOString(),
      linkId: '6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10',
      platform: 'ios',
      country: 'DE',
      browser: 'Mobile Safari',
      os: 'iOS',
      referrer: `${'r'.repeat(200)}${i}.example`,
    }));
    const entry = { at: new Date().toISOString(), links: { '6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10': 100 }, recent };
    for (let chunk = 0; chunk < 40 && (await openSlots(owner.id)) > 0; chunk++) {
      await Promise.all(Array.from({ length: 100 }, () => appendLiveEntry(a.env.redis, keys, owner.id, entry)));
    }
    await waitUntil(async () => (await openSlots(owner.id)) === 0, 10_000, { failure: 'the stream closed' });
    socket.resume();
    await closed;
  });

  it('ends its streams cleanly when an instance shuts down', async () => {
    const owner = await a.registerUser();
    const c = await a.sibling();
    const stream = await open(await listen(c), '/api/analytics/live', owner.token);
    expect(stream.response.status).toBe(200);
    await c.close();
    await waitUntil(() => stream.ended(), 5_000, { failure: 'the stream ended' });
    expect(await openSlots(owner.id)).toBe(0);
  });
});
