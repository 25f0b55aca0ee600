import { createHash, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  AppError,
  type AppEvent,
  type AppEventPlatform,
  CLICK_BATCH_JOB,
  CLICK_JOB_OPTIONS,
  CLICK_QUEUE,
  type ClickJobData,
  packClickBatch,
} from '@deeplink/core';
import type { AppRecord } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';
import { withTimeout } from '@deeplink/core/runtime';

/** How long queueing an open may take before the call is answered 503: an app retries, a hung call helps nobody. */
export const OPEN_QUEUE_TIMEOUT_MS = 2_000;

const PLATFORMS: Record<AppRecord['platform'], AppEventPlatform> = { ios: 'IOS', android: 'ANDROID' };

/**
 * The id that makes an open count once: the same app and openId give the same id, so a retried
 * open is counted once however often it arrives. Hashed so that the app's own ids of different
 * apps cannot meet.
 */
export const openEventId = (appId: string, openId: string): string => createHash('sha256').update(`${appId}\n${openId}`).digest('hex');

/**
 * The ids of the two events an install matched to a link counts (APP_INSTALL and its
 * APP_FIRST_OPEN): from the app and its installId, so an install retried, or asking again at its
 * next launch, counts once. Apart from any openId of the same app by the words they hash.
 */
export const installEventIds = (appId: string, installId: string): { install: string; firstOpen: string } => ({
  install: openEventId(appId, `install\n${installId}`),
  firstOpen: openEventId(appId, `install-first-open\n${installId}`),
});

/**
 * Who an install is in the unique counts of its events (AppEvent.visitor): from the app and its
 * installId, hashed as the event ids are, so an install counts once however often it installs,
 * retries or opens, and the installIds of different apps cannot meet. Apart from every event id by
 * the word it hashes; base64url, so a batch carries 43 characters for it.
 */
export const installVisitor = (appId: string, installId: string): string =>
  createHash('sha256').update(`${appId}\ninstall-visitor\n${installId}`).digest('base64url');

/**
 * Counts app opens: each goes to the worker as a batch of one app event (packed-2, no clicks) on
 * the click queue the redirector writes, so the worker rolls it up like a store redirect.
 */
export function appOpenEvents(deps: { redis: RedisClient; queuePrefix: string; timeoutMs?: number }) {
  const queue = new Queue<ClickJobData>(CLICK_QUEUE, { connection: deps.redis, prefix: deps.queuePrefix });
  // A failing add answers its call with 503; the queue's own error events say nothing more.
  queue.on('error', () => {});
  const timeoutMs = deps.timeoutMs ?? OPEN_QUEUE_TIMEOUT_MS;

  /** One packed-2 batch of `events` and no clicks, on the queue within timeoutMs, or the 503. */
  const queueEvents = async (events: AppEvent[], failure: string): Promise<void> => {
    const batch = packClickBatch({ batchId: randomUUID(), clicks: [], appEvents: events });
    try {
      await withTimeout(
        queue.add(CLICK_BATCH_JOB, batch, { ...CLICK_JOB_OPTIONS, jobId: batch.batchId }),
        timeoutMs,
        'app event queue add',
      );
    } catch {
      throw new AppError('unavailable', failure);
    }
  };

  return {
    /**
     * Queues the open of `linkId` by `app`; resolves once the queue has it. Without an openId
     * the open gets an id of its own, and a retry of it counts again. With an installId the open
     * counts in the unique counts as its install (installVisitor); without, as itself (the worker
     * takes its id). Throws a 503 AppError when the queue cannot be reached: the open would
     * otherwise be lost while the app believes it recorded.
     */
    async record(
      app: AppRecord,
      linkId: string,
      open: { openId?: string; installId?: string; firstLaunch?: boolean },
      now = Date.now(),
    ): Promise<void> {
      const event: AppEvent = {
        eventId: openEventId(app.id, open.openId ?? randomUUID()),
        name: open.firstLaunch ? 'APP_FIRST_OPEN' : 'APP_RE_OPEN',
        platform: PLATFORMS[app.platform],
        linkId,
        ts: now,
      };
      if (open.installId !== undefined) event.visitor = installVisitor(app.id, open.installId);
      await queueEvents([event], 'The open could not be recorded now; try again shortly');
    },

    /**
     * Queues an install matched to `linkId`: APP_INSTALL and APP_FIRST_OPEN in one batch, each
     * counted once per app and installId, and as that install in the unique counts (so an install
     * counted again once its event ids were pruned is still one install). Throws the 503 AppError as record does.
     */
    async recordInstall(app: AppRecord, linkId: string, installId: string, now = Date.now()): Promise<void> {
      const ids = installEventIds(app.id, installId);
      const platform = PLATFORMS[app.platform];
      const visitor = installVisitor(app.id, installId);
      await queueEvents(
        [
          { eventId: ids.install, name: 'APP_INSTALL', platform, linkId, ts: now, visitor },
          { eventId: ids.firstOpen, name: 'APP_FIRST_OPEN', platform, linkId, ts: now, visitor },
        ],
        'The install could not be recorded now; try again shortly',
      );
    },

    close: () => queue.close(),
  };
}
export type AppOpenEvents = ReturnType<typeof appOpenEvents>;
