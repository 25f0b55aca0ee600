import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLICK_BATCH_JOB, type ClickJobData, PACKED_FORMAT } from '@deeplink/core';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import {
  UA,
  clickQueue,
  createLink,
  createUser,
  queuedBatches,
  queuedClicks,
  startRedirector,
  visit,
  type RedirectorProcess,
} from './support.js';

describe('click capture', () => {
  let env: TestEnvironment;
  let queue: Queue<ClickJobData>;
  let userId: string;
  const running: RedirectorProcess[] = [];
  const start = async (overrides: Record<string, string> = {}) => {
    const redirector = await startRedirector({ ...env.env, ...overrides });
    running.push(redirector);
    return redirector;
  };
  const clicksOf = async (linkId: string) => (await queuedClicks(queue)).filter((c) => c.linkId === linkId);
  const batchesOf = async (linkId: string) =>
    (await queuedBatches(queue)).filter(({ batch }) => batch.clicks.some((c) => c.linkId === linkId));

  beforeAll(async () => {
    env = await createTestEnvironment();
    userId = await createUser(env.sql);
    queue = clickQueue(env.config.REDIS_URL, env.config.QUEUE_PREFIX);
  });

  afterAll(async () => {
    for (const redirector of running) await redirector.stop();
    await queue?.close();
    await env?.close();
  });

  it('queues each redirect as a click in a batch job, with the visit fields', async () => {
    const redirector = await start();
    const link = await createLink(env.sql, userId, { iosLink: { url: 'app://x', bundleId: 'com.example.app' } });
    const before = Date.now();
    const visits: Record<string, string>[] = [
      { 'user-agent': UA.windowsChrome, referer: 'https://news.example/item/1' },
      { 'user-agent': UA.iphoneSafari, referer: 'https://social.example/' }, // the 200 app page counts too
      { 'user-agent': UA.googlebot }, // bots are the worker's to drop
    ];
    for (const headers of visits) expect((await visit(`${redirector.url}/${link.code}`, headers)).status).toBeLessThan(400);
    // HEAD is answered but is not a visit.
    await visit(`${redirector.url}/${link.code}`, { 'user-agent': 'head-probe' }, 'HEAD');

    await expect.poll(async () => (await clicksOf(link.id)).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(visits.length);
    const clicks = await clicksOf(link.id);
    const after = Date.now();
    expect(clicks).toHaveLength(visits.length);
    expect(clicks.map(({ userAgent, referrer }) => ({ userAgent, referrer }))).toEqual([
      { userAgent: UA.windowsChrome, referrer: 'https://news.example/item/1' },
      { userAgent: UA.iphoneSafari, referrer: 'https://social.example/' },
      { userAgent: UA.googlebot, referrer: '' },
    ]);
    for (const click of clicks) {
      expect(Object.keys(click).sort()).toEqual(['ip', 'linkId', 'referrer', 'ts', 'userAgent']);
      expect(click.ip).toBe('127.0.0.1');
      expect(click.ts).toBeGreaterThanOrEqual(before);
      expect(click.ts).toBeLessThanOrEqual(after);
    }

    const jobs = await batchesOf(link.id);
    for (const { job, batch } of jobs) {
      expect(job.name).toBe(CLICK_BATCH_JOB);
      expect(job.data).toMatchObject({ format: PACKED_FORMAT });
      expect(job.id).toBe(batch.batchId);
      expect(job.opts.attempts).toBeGreaterThan(1);
      expect(job.opts.backoff).toMatchObject({ type: 'exponential' });
      expect(job.opts.removeOnFail).toBeUndefined(); // how long failed batches stay is the worker's setting
    }
    expect(new Set(jobs.map(({ batch }) => batch.batchId)).size).toBe(jobs.length);
  });

  it('takes the address from X-Forwarded-For only when TRUST_PROXY is set', async () => {
    const link = await createLink(env.sql, userId);
    const direct = await start();
    const proxied = await start({ TRUST_PROXY: '1' });
    const listed = await start({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' });
    const forwarded = (xff: string, referer: string) => ({ 'x-forwarded-for': xff, referer });
    await visit(`${direct.url}/${link.code}`, forwarded('203.0.113.7', 'direct'));
    await visit(`${proxied.url}/${link.code}`, forwarded('203.0.113.7, 10.0.0.1', 'proxied'));
    await visit(`${proxied.url}/${link.code}`, forwarded('2001:db8::1', 'proxied-v6'));
    await visit(`${proxied.url}/${link.code}`, forwarded('not-an-address', 'proxied-garbage'));
    await visit(`${proxied.url}/${link.code}`, { referer: 'proxied-none' });
    // The client writes what it likes on the left; the proxy appends what it saw: only that counts.
    await visit(`${proxied.url}/${link.code}`, forwarded('1.1.1.1, 2.2.2.2, 198.51.100.20', 'proxied-spoofed'));
    await visit(`${listed.url}/${link.code}`, forwarded('1.1.1.1, 198.51.100.30, 10.1.2.3', 'listed-spoofed'));

    await expect.poll(async () => (await clicksOf(link.id)).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(7);
    const clicks = await clicksOf(link.id);
    const ipBy = Object.fromEntries(clicks.map((c) => [c.referrer, c.ip]));
    expect(ipBy).toEqual({
      direct: '127.0.0.1',
      proxied: '10.0.0.1', // the rightmost entry: the one the trusted proxy added
      'proxied-v6': '2001:db8::1',
      'proxied-garbage': '127.0.0.1',
      'proxied-none': '127.0.0.1',
      'proxied-spoofed': '198.51.100.20',
      'listed-spoofed': '198.51.100.30', // 10.1.2.3 is a trusted proxy too; the hop before it is the client
    });
  });

  it('writes a job as soon as CLICK_BATCH_SIZE clicks wait, and the rest on SIGTERM', async () => {
    const link = await createLink(env.sql, userId);
    // A flush interval far longer than the test: only the size trigger and shutdown can flush.
    const redirector = await start({ CLICK_BATCH_SIZE: '5', CLICK_FLUSH_MS: '600000' });
    for (let i = 0; i < 12; i++) await visit(`${redirector.url}/${link.code}`, { referer: `r${i}` });

    const sizes = async () => (await batchesOf(link.id)).map(({ batch }) => batch.clicks.length).sort();
    await expect.poll(async () => (await sizes()).length === 2, { timeout: 5_000 }).toBe(true);
    expect(await sizes()).toEqual([5, 5]);

    expect(await redirector.stop()).toBe(0);
    expect(await sizes()).toEqual([2, 5, 5]);
    const referrers = (await clicksOf(link.id)).map((c) => c.referrer).sort();
    expect(referrers).toEqual(Array.from({ length: 12 }, (_, i) => `r${i}`).sort());
  });

  it('has every click that got a 302 in the queue after a SIGTERM under load', async () => {
    const link = await createLink(env.sql, userId);
    const redirector = await start({ CLICK_FLUSH_MS: '600000', CLICK_BATCH_SIZE: '100000' });
    const redirected: string[] = [];
    let sent = 0;
    let signalled: Promise<number | null> | undefined;

    const client = async (id: number) => {
      for (let n = 0; ; n++) {
        const marker = `c${id}-${n}`;
        sent++;
        try {
          const res = await visit(`${redirector.url}/${link.code}`, { referer: marker });
          if (res.status === 302) redirected.push(marker);
          await res.arrayBuffer();
        } catch {
          return; // the server is gone
        }
        if (redirected.length === 300 && !signalled) signalled = redirector.stop();
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, id) => client(id)));
    expect(await signalled).toBe(0);

    const queued = (await clicksOf(link.id)).map((c) => c.referrer);
    expect(redirected.length).toBeGreaterThanOrEqual(300);
    expect(new Set(queued).size).toBe(queued.length); // nothing queued twice
    expect(queued.length).toBeLessThanOrEqual(sent);
    const missing = redirected.filter((marker) => !queued.includes(marker));
    expect(missing).toEqual([]);
  });
});
