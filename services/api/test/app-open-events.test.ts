// Counted opens: each goes to the click queue as a packed-2 batch of one app event (real Redis and
// BullMQ), and a queue that cannot be reached is a 503, not an open that seems counted.
import { Queue } from 'bullmq';
import { CLICK_QUEUE, readClickJob } from '@deeplink/core';
import type { AppRecord } from '@deeplink/core/db';
import { createRedis } from '@deeplink/core/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { appOpenEvents, installEventIds, installVisitor, openEventId } from '../src/domain/app-open-events.js';

let env: TestEnvironment;
let queue: Queue;
beforeAll(async () => {
  env = await createTestEnvironment();
  queue = new Queue(CLICK_QUEUE, { connection: env.redis, prefix: env.config.QUEUE_PREFIX });
});
afterAll(async () => {
  await queue?.close();
  await env?.close();
});

const app = (platform: 'ios' | 'android') => ({ id: `app-${platform}`, platform }) as AppRecord;
const LINK = '6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10';

describe('appOpenEvents', () => {
  it('queues a batch with no clicks and one open: first or re-open, the app platform, an id from the app and openId', async () => {
    const events = appOpenEvents({ redis: env.redis, queuePrefix: env.config.QUEUE_PREFIX });
    await events.record(app('ios'), LINK, { openId: 'open-0001', firstLaunch: true }, 1_700_000_000_000);
    await events.record(app('android'), LINK, { openId: 'open-0002' }, 1_700_000_000_500);
    await events.close();
    const batches = (await queue.getJobs(['waiting'])).map((job) => readClickJob(job.data));
    expect(batches.map((batch) => batch?.clicks)).toEqual([[], []]);
    expect(batches.flatMap((batch) => batch?.appEvents ?? []).sort((a, b) => a.ts - b.ts)).toEqual([
      { eventId: openEventId('app-ios', 'open-0001'), name: 'APP_FIRST_OPEN', platform: 'IOS', linkId: LINK, ts: 1_700_000_000_000 },
      { eventId: openEventId('app-android', 'open-0002'), name: 'APP_RE_OPEN', platform: 'ANDROID', linkId: LINK, ts: 1_700_000_000_500 },
    ]);
    // The same openId of another app is another open.
    expect(openEventId('app-ios', 'open-0001')).not.toBe(openEventId('app-android', 'open-0001'));
    expect(openEventId('app-ios', 'open-0001')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('queues an install as APP_INSTALL and APP_FIRST_OPEN in one batch, with ids from the app and installId', async () => {
    await queue.drain();
    const events = appOpenEvents({ redis: env.redis, queuePrefix: env.config.QUEUE_PREFIX });
    await events.recordInstall(app('ios'), LINK, 'install-0001', 1_700_000_001_000);
    await events.close();
    const batches = (await queue.getJobs(['waiting'])).map((job) => readClickJob(job.data));
    expect(batches).toHaveLength(1);
    const ids = installEventIds('app-ios', 'install-0001');
    // Both count as the install in the unique counts.
    const visitor = installVisitor('app-ios', 'install-0001');
    expect(batches[0]?.appEvents).toEqual([
      { eventId: ids.install, name: 'APP_INSTALL', platform: 'IOS', linkId: LINK, ts: 1_700_000_001_000, visitor },
      { eventId: ids.firstOpen, name: 'APP_FIRST_OPEN', platform: 'IOS', linkId: LINK, ts: 1_700_000_001_000, visitor },
    ]);
    // Apart from each other, from another app's install and from an open with the same id.
    expect(
      new Set([ids.install, ids.firstOpen, installEventIds('app-android', 'install-0001').install, openEventId('app-ios', 'install-0001')])
        .size,
    ).toBe(4);
  });

  it('counts an open that names its install as that install in the unique counts, hashed with the app', async () => {
    await queue.drain();
    const events = appOpenEvents({ redis: env.redis, queuePrefix: env.config.QUEUE_PREFIX });
    await events.record(app('android'), LINK, { openId: 'open-0004', installId: 'install-0002' }, 1_700_000_002_000);
    await events.close();
    const [batch] = (await queue.getJobs(['waiting'])).map((job) => readClickJob(job.data));
    expect(batch?.appEvents).toEqual([
      {
        eventId: openEventId('app-android', 'open-0004'),
        name: 'APP_RE_OPEN',
        platform: 'ANDROID',
        linkId: LINK,
        ts: 1_700_000_002_000,
        visitor: installVisitor('app-android', 'install-0002'),
      },
    ]);
    // A hash, never the installId: the same for the same app and install, apart for another app or from any event id.
    const visitor = installVisitor('app-android', 'install-0002');
    expect(visitor).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(visitor).not.toContain('install-0002');
    expect(installVisitor('app-ios', 'install-0002')).not.toBe(visitor);
    expect(Object.values(installEventIds('app-android', 'install-0002'))).not.toContain(visitor);
  });

  it('answers 503 when the queue cannot be reached, within its time limit', async () => {
    // Nothing listens on port 1.
    const unreachable = createRedis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    unreachable.on('error', () => {});
    const events = appOpenEvents({ redis: unreachable, queuePrefix: env.config.QUEUE_PREFIX, timeoutMs: 500 });
    const started = Date.now();
    await expect(events.record(app('ios'), LINK, { openId: 'open-0003' })).rejects.toMatchObject({ status: 503, kind: 'unavailable' });
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(events.recordInstall(app('ios'), LINK, 'install-0003')).rejects.toMatchObject({ status: 503, kind: 'unavailable' });
    await events.close().catch(() => {});
    unreachable.disconnect();
  });
});
