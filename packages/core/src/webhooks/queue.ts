import { randomUUID } from 'node:crypto';
import { type ConnectionOptions, Queue } from 'bullmq';
import type { WebhookEvent } from '../schemas/webhooks.js';

/** The BullMQ queue of webhook work, apart from the click queue so a slow receiver never delays a rollup. */
export const WEBHOOK_QUEUE = 'webhooks';
/** An account's events, to be turned into one delivery per subscribed endpoint (the worker does it). */
export const WEBHOOK_EVENTS_JOB = 'events';
/** One delivery (a row of webhook_deliveries), sent and retried. */
export const WEBHOOK_DELIVERY_JOB = 'deliver';

export interface WebhookEventsJobData {
  userId: string;
  events: WebhookEvent[];
}
export interface WebhookDeliveryJobData {
  deliveryId: string;
}
export type WebhookJobData = WebhookEventsJobData | WebhookDeliveryJobData;

/** Attempts of one delivery, the first included. */
export const WEBHOOK_ATTEMPTS = 8;

/**
 * The wait before the retry that follows attempt `attemptsMade` (from 1): `baseMs`, tripling, so
 * with the default minute the seven retries come 1, 3, 9, 27, 81, 243 and 729 minutes apart
 * (about 18 hours from the first attempt to the last).
 */
export const webhookRetryDelayMs = (attemptsMade: number, baseMs: number): number => baseMs * 3 ** Math.max(0, attemptsMade - 1);

/** Finished jobs leave at once: the delivery log in PostgreSQL is the record. */
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true } as const;

/** Options of a delivery job: retried by the worker's backoff strategy (webhookRetryDelayMs). */
export const webhookDeliveryJobOptions = (deliveryId: string) => ({
  ...JOB_OPTIONS,
  jobId: deliveryId,
  attempts: WEBHOOK_ATTEMPTS,
  backoff: { type: 'webhook' },
});

/** An event of `type` with a new id, made now. */
export const webhookEvent = <T extends WebhookEvent['type']>(
  type: T,
  data: Extract<WebhookEvent, { type: T }>['data'],
  at = new Date(),
): WebhookEvent => ({ id: `evt_${randomUUID()}`, type, createdAt: at.toISOString(), data }) as WebhookEvent;

/**
 * Hands an account's events to the worker, which looks up the endpoints that want them. One job
 * per call, whatever the number of events (a bulk create is one job).
 */
export function webhookEventQueue(connection: ConnectionOptions, prefix: string) {
  const queue = new Queue<WebhookJobData>(WEBHOOK_QUEUE, { connection, prefix });
  // A failing add is reported by the caller; the queue's own error events say nothing more.
  queue.on('error', () => {});
  const EVENTS_JOB_OPTIONS = { ...JOB_OPTIONS, attempts: 5, backoff: { type: 'exponential', delay: 1_000 } };
  return {
    queue,
    async send(userId: string, events: WebhookEvent[]): Promise<void> {
      if (events.length === 0) return;
      await queue.add(WEBHOOK_EVENTS_JOB, { userId, events }, EVENTS_JOB_OPTIONS);
    },
    /** Several accounts' events, one job each, in one round trip (a rollup commit's click events). */
    async sendMany(jobs: WebhookEventsJobData[]): Promise<void> {
      if (jobs.length === 0) return;
      await queue.addBulk(jobs.map((data) => ({ name: WEBHOOK_EVENTS_JOB, data, opts: EVENTS_JOB_OPTIONS })));
    },
    close: () => queue.close(),
  };
}
export type WebhookEventQueue = ReturnType<typeof webhookEventQueue>;
