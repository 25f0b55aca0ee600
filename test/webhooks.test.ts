// Webhooks end to end in one process: the real API (Fastify inject) and the real worker (BullMQ,
// PostgreSQL, Redis) on one test environment, delivering to a receiver on 127.0.0.1 (hence
// WEBHOOK_ALLOW_PRIVATE=1 here; the refusal of private targets has its own test in the worker).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_ENDPOINTS, type WebhookEvent } from '@deeplink/core';
import { verifyWebhookSignature } from '@deeplink/core/webhooks';
import { clickProducer, type ClickProducer } from '@deeplink/test-kit/clicks';
import { UA } from '@deeplink/test-kit/user-agents';
import { createApiHarness, createLinkOf, type ApiHarness } from '../services/api/test/harness.js';
import { createWorker, type ClickWorker } from '../services/worker/src/app.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  event: WebhookEvent;
}

/** A receiver on 127.0.0.1: records every request; `answers[path]` gives the statuses to answer in turn (then 200). */
function startReceiver() {
  const received: Received[] = [];
  const answers: Record<string, number[]> = {};
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const path = request.url!;
      received.push({ path, headers: request.headers, body, event: JSON.parse(body) as WebhookEvent });
      const status = answers[path]?.shift() ?? 200;
      // A long answer: the delivery log keeps its first bytes only.
      response.writeHead(status, { 'content-type': 'text/plain' }).end(`${status} `.padEnd(4_000, 'x'));
    });
  });
  return {
    received,
    answers,
    async listen(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    /** The requests to `path` whose event is of `type`. */
    of: (path: string, type: string) => received.filter((r) => r.path === path && r.event.type === type),
  };
}

/** The v1 signatures of a Webhook-Signature header, and its time, checked by hand (not with the service's code). */
function signatures(header: string): { timestamp: number; v1: string[] } {
  const parts = header.split(',').map((part) => part.split('=') as [string, string]);
  return { timestamp: Number(parts.find(([key]) => key === 't')![1]), v1: parts.filter(([key]) => key === 'v1').map(([, value]) => value) };
}
const expectedSignature = (secret: string, timestamp: number, body: string) =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/** The receiver's check as docs/webhooks.md shows it, run as written. */
type DocsVerify = (header: string, body: string, secret: string, now?: number) => boolean;
const docsVerify = (() => {
  const page = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
  const source = /\n(function verify\([\s\S]*?\n\})\n/.exec(page)![1]!;
  const tolerance = Number(
    /const TOLERANCE_SECONDS = ([\d *]+);/
      .exec(page)![1]!
      .split('*')
      .reduce((product, n) => product * Number(n), 1),
  );
  return new Function('createHmac', 'timingSafeEqual', 'TOLERANCE_SECONDS', `${source}\nreturn verify;`)(
    createHmac,
    timingSafeEqual,
    tolerance,
  ) as DocsVerify;
})();

describe('webhooks', () => {
  let api: ApiHarness;
  let worker: ClickWorker;
  let producer: ClickProducer;
  const receiver = startReceiver();
  let base: string;
  let owner: { id: string; token: string };

  beforeAll(async () => {
    base = await receiver.listen();
    api = await createApiHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '100' } });
    worker = await createWorker({ config: api.env.config, sql: api.env.sql, redis: api.env.redis, schedule: false });
    producer = clickProducer(api.env);
    owner = await api.registerUser('Hooked');
  });
  afterAll(async () => {
    await producer?.close();
    await worker?.close();
    await api?.close();
    await receiver.close();
  });

  const createWebhook = async (token: string, payload: Record<string, unknown>) => {
    const response = await api.request({ method: 'POST', url: '/api/webhooks', token, payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data.webhook as { id: string; url: string; secret: string; events: string[] };
  };
  const deliveries = async (token: string, id: string) =>
    (await api.request({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, token })).json().data.deliveries as {
      id: string;
      event: string;
      status: string;
      attempts: number;
      responseStatus: number | null;
      responseBody: string | null;
    }[];

  it('creates, reads, lists, changes and deletes endpoints; validates; caps; hides other accounts', async () => {
    const { token } = await api.registerUser('Crud');
    const created = await createWebhook(token, { url: 'https://hooks.example.com/a', events: ['link.created', 'link.created'] });
    expect(created).toMatchObject({ url: 'https://hooks.example.com/a', events: ['link.created'], enabled: true });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // The secret is shown once: never by a read.
    const read = await api.request({ method: 'GET', url: `/api/webhooks/${created.id}`, token });
    expect(read.json().data.webhook).not.toHaveProperty('secret');
    const patched = await api.request({
      method: 'PATCH',
      url: `/api/webhooks/${created.id}`,
      token,
      payload: { enabled: false, events: ['click'], description: 'Orders' },
    });
    expect(patched.json().data.webhook).toMatchObject({ enabled: false, events: ['click'], description: 'Orders', url: created.url });
    const cleared = await api.request({ method: 'PATCH', url: `/api/webhooks/${created.id}`, token, payload: { description: null } });
    expect(cleared.json().data.webhook).not.toHaveProperty('description');

    const bad = await api.request({
      method: 'POST',
      url: '/api/webhooks',
      token,
      payload: { url: 'https://user:pw@hooks.example.com/', events: ['link.exploded'], extra: 1 },
    });
    expect(bad.statusCode).toBe(400);
    expect(
      bad
        .json()
        .error.details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['events.0', 'extra', 'url']);
    for (const url of ['ftp://hooks.example.com/', 'javascript:alert(1)', 'not a url']) {
      const refused = await api.request({ method: 'POST', url: '/api/webhooks', token, payload: { url, events: ['click'] } });
      expect(refused.json().error.details, url).toEqual([{ field: 'url', message: 'must be an absolute http:// or https:// URL' }]);
    }
    const none = await api.request({ method: 'POST', url: '/api/webhooks', token, payload: { url: 'https://a.example.com', events: [] } });
    expect(none.json().error.details).toEqual([{ field: 'events', message: 'must name at least one event' }]);

    for (let i = 1; i < MAX_WEBHOOK_ENDPOINTS; i++)
      await createWebhook(token, { url: `https://hooks.example.com/${i}`, events: ['click'] });
    const over = await api.request({
      method: 'POST',
      url: '/api/webhooks',
      token,
      payload: { url: 'https://b.example.com', events: ['click'] },
    });
    expect(over.statusCode).toBe(409);
    expect((await api.request({ method: 'GET', url: '/api/webhooks', token })).json().data.webhooks).toHaveLength(MAX_WEBHOOK_ENDPOINTS);

    // Another account's endpoint is not there for anyone else, whatever the operation.
    const stranger = await api.registerUser('Stranger');
    for (const [method, url, payload] of [
      ['GET', `/api/webhooks/${created.id}`],
      ['PATCH', `/api/webhooks/${created.id}`, { enabled: true }],
      ['DELETE', `/api/webhooks/${created.id}`],
      ['POST', `/api/webhooks/${created.id}/rotate-secret`],
      ['GET', `/api/webhooks/${created.id}/deliveries`],
      ['GET', '/api/webhooks/not-a-uuid'],
    ] as const) {
      const answer = await api.request({ method, url, token: stranger.token, payload });
      expect(answer.statusCode, `${method} ${url}`).toBe(404);
      expect(answer.json().error.code).toBe('NOT_FOUND');
    }
    expect((await api.request({ method: 'GET', url: '/api/webhooks', token: stranger.token })).json().data.webhooks).toEqual([]);
    expect((await api.request({ method: 'GET', url: `/api/webhooks/${created.id}` })).statusCode).toBe(401);

    expect((await api.request({ method: 'DELETE', url: `/api/webhooks/${created.id}`, token })).statusCode).toBe(200);
    expect((await api.request({ method: 'GET', url: `/api/webhooks/${created.id}`, token })).statusCode).toBe(404);
  });

  it('delivers link.created, link.updated and link.deleted, signed with the secret; a rotation signs with both', async () => {
    const hook = await createWebhook(owner.token, { url: `${base}/links`, events: ['link.created', 'link.updated', 'link.deleted'] });
    const link = await createLinkOf(api, owner.token, { title: 'Announced' });
    await api.request({ method: 'PUT', url: `/api/links/${link.id}`, token: owner.token, payload: { title: 'Renamed' } });
    await api.request({ method: 'DELETE', url: `/api/links/${link.id}`, token: owner.token });
    await expect.poll(() => receiver.of('/links', 'link.deleted').length, { timeout: 15_000 }).toBe(1);

    const [created] = receiver.of('/links', 'link.created');
    const [updated] = receiver.of('/links', 'link.updated');
    const [deleted] = receiver.of('/links', 'link.deleted');
    expect(created!.event.data).toMatchObject({ link: { id: link.id, title: 'Announced', url: link.url } });
    expect(updated!.event.data).toMatchObject({ link: { id: link.id, title: 'Renamed' } });
    expect(deleted!.event.data).toEqual({ link: { id: link.id } });
    for (const request of [created!, updated!, deleted!]) {
      const { timestamp, v1 } = signatures(String(request.headers['webhook-signature']));
      expect(v1).toEqual([expectedSignature(hook.secret, timestamp, request.body)]);
      expect(Math.abs(Date.now() / 1000 - timestamp)).toBeLessThan(60);
      expect(request.headers['webhook-id']).toBe(request.event.id);
      expect(request.headers['content-type']).toBe('application/json');
      expect(verifyWebhookSignature(String(request.headers['webhook-signature']), request.body, hook.secret)).toBe(true);
      expect(verifyWebhookSignature(String(request.headers['webhook-signature']), `${request.body} `, hook.secret)).toBe(false);
      // The docs' example accepts it, and refuses it 5 minutes and a second later.
      expect(docsVerify(String(request.headers['webhook-signature']), request.body, hook.secret)).toBe(true);
      expect(docsVerify(String(request.headers['webhook-signature']), request.body, hook.secret, timestamp + 301)).toBe(false);
      expect(docsVerify(String(request.headers['webhook-signature']), request.body, 'whsec_wrong')).toBe(false);
    }
    const log = await deliveries(owner.token, hook.id);
    expect(log.map((d) => [d.event, d.status, d.attempts, d.responseStatus])).toEqual([
      ['link.deleted', 'succeeded', 1, 200],
      ['link.updated', 'succeeded', 1, 200],
      ['link.created', 'succeeded', 1, 200],
    ]);

    const rotated = await api.request({ method: 'POST', url: `/api/webhooks/${hook.id}/rotate-secret`, token: owner.token });
    const { secret, previousSecretExpiresAt } = rotated.json().data.webhook;
    expect(secret).not.toBe(hook.secret);
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await createLinkOf(api, owner.token, { title: 'After the rotation' });
    await expect.poll(() => receiver.of('/links', 'link.created').length, { timeout: 15_000 }).toBe(2);
    const after = receiver.of('/links', 'link.created')[1]!;
    const { timestamp, v1 } = signatures(String(after.headers['webhook-signature']));
    expect(v1).toEqual([expectedSignature(secret, timestamp, after.body), expectedSignature(hook.secret, timestamp, after.body)]);
    // A receiver holding either secret accepts it.
    for (const held of [secret, hook.secret]) expect(docsVerify(String(after.headers['webhook-signature']), after.body, held)).toBe(true);
  });

  it('sends one click event per counted batch, with counts and recent clicks but never an address or agent', async () => {
    const { token } = await api.registerUser('Clicks');
    const hook = await createWebhook(token, { url: `${base}/clicks`, events: ['click'] });
    // Created before any click reached the worker, so its first look-up of click endpoints finds it.
    const [first, second] = [await createLinkOf(api, token), await createLinkOf(api, token)];
    const ts = Date.now();
    await producer.add({
      batchId: 'webhook-clicks-1',
      clicks: [
        { linkId: first!.id, ts, ip: '203.0.113.77', userAgent: UA.windowsChrome, referrer: 'https://t.co/x' },
        { linkId: first!.id, ts: ts + 1, ip: '203.0.113.78', userAgent: UA.iphoneSafari, referrer: '' },
        { linkId: second!.id, ts: ts + 2, ip: '203.0.113.79', userAgent: UA.windowsChrome, referrer: '' },
        // A bot: not counted, not sent.
        { linkId: second!.id, ts: ts + 3, ip: '203.0.113.80', userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)', referrer: '' },
      ],
    });
    await expect.poll(() => receiver.of('/clicks', 'click').length, { timeout: 15_000 }).toBe(1);
    const [click] = receiver.of('/clicks', 'click');
    expect(click!.event.data).toMatchObject({ totalClicks: 3, links: { [first!.id]: 2, [second!.id]: 1 } });
    const data = click!.event.data as { recent: Record<string, unknown>[] };
    expect(data.recent).toHaveLength(3);
    expect(data.recent[0]).toEqual({
      at: new Date(ts + 2).toISOString(),
      linkId: second!.id,
      platform: 'desktop',
      country: expect.any(String),
      browser: 'Chrome',
      os: 'Windows',
      referrer: 'direct',
    });
    expect(click!.body).not.toMatch(/203\.0\.113|Mozilla|Googlebot/);
    const { timestamp, v1 } = signatures(String(click!.headers['webhook-signature']));
    expect(v1).toEqual([expectedSignature(hook.secret, timestamp, click!.body)]);

    // The same batch again (a redelivered job) is not counted again, so it adds nothing to the next event.
    await producer.add(
      { batchId: 'webhook-clicks-1', clicks: [{ linkId: first!.id, ts, ip: '203.0.113.77', userAgent: UA.windowsChrome, referrer: '' }] },
      { jobId: 'webhook-clicks-1-again' },
    );
    await producer.add({
      batchId: 'webhook-clicks-2',
      clicks: [{ linkId: first!.id, ts: ts + 10, ip: '203.0.113.81', userAgent: UA.iphoneSafari, referrer: '' }],
    });
    await expect.poll(() => receiver.of('/clicks', 'click').length, { timeout: 15_000 }).toBe(2);
    expect(receiver.of('/clicks', 'click')[1]!.event.data).toMatchObject({ totalClicks: 1, links: { [first!.id]: 1 } });
    expect((await deliveries(token, hook.id)).map((d) => d.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('retries a receiver that answers 500, logs each attempt, and resends on request', async () => {
    const { token } = await api.registerUser('Flaky');
    receiver.answers['/flaky'] = [500, 503];
    const hook = await createWebhook(token, { url: `${base}/flaky`, events: ['link.created'] });
    await createLinkOf(api, token, { title: 'Retried' });
    await expect.poll(async () => (await deliveries(token, hook.id))[0]?.status, { timeout: 15_000 }).toBe('succeeded');
    const [delivery] = await deliveries(token, hook.id);
    expect(delivery).toMatchObject({ event: 'link.created', attempts: 3, responseStatus: 200 });
    // The answer's first bytes only.
    expect(delivery!.responseBody).toBe('200 '.padEnd(512, 'x'));
    const attempts = receiver.of('/flaky', 'link.created');
    expect(attempts).toHaveLength(3);
    // The same event and body on every attempt, each signed anew.
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);

    const resent = await api.request({ method: 'POST', url: `/api/webhooks/${hook.id}/deliveries/${delivery!.id}/resend`, token });
    expect(resent.statusCode).toBe(201);
    expect(resent.json().data.delivery).toMatchObject({ event: 'link.created', status: 'pending', attempts: 0 });
    await expect.poll(() => receiver.of('/flaky', 'link.created').length, { timeout: 15_000 }).toBe(4);
    expect(receiver.of('/flaky', 'link.created')[3]!.headers['webhook-id']).toBe(attempts[0]!.event.id);
    await expect
      .poll(async () => (await deliveries(token, hook.id)).map((d) => [d.status, d.attempts]), { timeout: 15_000 })
      .toEqual([
        ['succeeded', 1],
        ['succeeded', 3],
      ]);
    const missing = await api.request({ method: 'POST', url: `/api/webhooks/${hook.id}/deliveries/${hook.id}/resend`, token });
    expect(missing.statusCode).toBe(404);
  });

  it('keeps a failing delivery pending between attempts, and sends nothing to a disabled endpoint', async () => {
    const { token } = await api.registerUser('Down');
    receiver.answers['/down'] = new Array(8).fill(500);
    const hook = await createWebhook(token, { url: `${base}/down`, events: ['link.created'] });
    await createLinkOf(api, token);
    // 100 ms tripling: all eight attempts would take about 2 minutes, so the test looks after two.
    await expect.poll(() => receiver.of('/down', 'link.created').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    await expect
      .poll(async () => (await deliveries(token, hook.id))[0], { timeout: 15_000 })
      .toMatchObject({ status: 'pending', responseStatus: 500, responseBody: '500 '.padEnd(512, 'x') });

    const quiet = await createWebhook(token, { url: `${base}/quiet`, events: ['link.updated'], enabled: false });
    const witness = await createWebhook(token, { url: `${base}/witness`, events: ['link.updated'] });
    const link = await createLinkOf(api, token);
    await api.request({ method: 'PUT', url: `/api/links/${link.id}`, token, payload: { title: 'Unheard' } });
    // Both endpoints' deliveries come from the same events job: once the witness has its, the quiet one would have had its.
    await expect.poll(() => receiver.of('/witness', 'link.updated').length, { timeout: 15_000 }).toBe(1);
    expect(await deliveries(token, quiet.id)).toEqual([]);
    expect(receiver.of('/quiet', 'link.updated')).toEqual([]);
    expect((await deliveries(token, witness.id)).map((d) => d.status)).toEqual(['succeeded']);
  });
});
