import type { WebhooksRepository } from '@deeplink/core/db';
import type { LiveEntry } from '@deeplink/core/redis';
import { type WebhookEventQueue, webhookEvent } from '@deeplink/core/webhooks';

/** How long the worker trusts its list of accounts with a click endpoint: a new one gets clicks within this. */
export const CLICK_SUBSCRIBERS_TTL_MS = 10_000;

/**
 * The `click` events of each rollup commit: one per account with an enabled click endpoint, from
 * the same per-account entry the live streams get (counts per link and the newest clicks, never an
 * address). Which accounts want them is one query every CLICK_SUBSCRIBERS_TTL_MS at most, read in
 * the background while the last answer is used; an account without a click endpoint costs a Set
 * lookup per commit.
 */
export function createClickWebhooks(deps: {
  webhooks: Pick<WebhooksRepository, 'clickSubscribers'>;
  events: Pick<WebhookEventQueue, 'sendMany'>;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  let subscribers = new Set<string>();
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  const refresh = () =>
    (reading ??= deps.webhooks
      .clickSubscribers()
      .then(
        (ids) => {
          subscribers = new Set(ids);
          readAt = now();
        },
        (error: unknown) => {
          // Tried again after a TTL, not at every commit, while the database does not answer.
          readAt = now();
          throw error;
        },
      )
      .finally(() => {
        reading = undefined;
      }));

  return {
    /** The accounts that want click events, read again when the list is older than its TTL (the first call waits for it). */
    async subscribers(): Promise<Set<string>> {
      if (now() - readAt >= CLICK_SUBSCRIBERS_TTL_MS) {
        const read = refresh();
        if (readAt === Number.NEGATIVE_INFINITY) await read;
        else read.catch(() => {});
      }
      return subscribers;
    },
    /** Queues the click event of each account's share of a commit, in one round trip. */
    async send(entries: (readonly [userId: string, entry: LiveEntry])[]): Promise<void> {
      await deps.events.sendMany(
        entries.map(([userId, entry]) => {
          const totalClicks = Object.values(entry.links).reduce((sum, clicks) => sum + clicks, 0);
          const data = { committedAt: entry.at, totalClicks, links: entry.links, recent: entry.recent };
          return { userId, events: [webhookEvent('click', data)] };
        }),
      );
    },
  };
}
export type ClickWebhooks = ReturnType<typeof createClickWebhooks>;
