import { type ConnectionOptions, type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Config } from '@deeplink/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhooksRepository } from '@deeplink/core/db';
import type { Logger } from '@deeplink/core/runtime';
import {
  WEBHOOK_DELIVERY_JOB,
  WEBHOOK_EVENTS_JOB,
  WEBHOOK_QUEUE,
  WEBHOOK_SIGNATURE_HEADER,
  type WebhookDeliveryJobData,
  webhookDeliveryJobOptions,
  type WebhookEventQueue,
  type WebhookEventsJobData,
  type WebhookJobData,
  webhookRetryDelayMs,
  type WebhookSecretBox,
  signWebhook,
} from '@deeplink/core/webhooks';
import { RefusedAddressError, resolvePublicAddress, type Lookup, UnresolvedHostError } from '@deeplink/core/net';
import type { LookupAddress } from 'node:dns';
import { type SendResult, sendRequest } from './send-request.js';

const USER_AGENT = 'Deeplink-Webhooks/1';

/** The secrets that sign a delivery now: the current one, and the replaced one during its overlap. */
function signingSecrets(endpoint: WebhookEndpointRecord, box: WebhookSecretBox, now: Date): string[] | undefined {
  const current = box.open(endpoint.secret);
  if (current === undefined) return undefined;
  const previous =
    endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now
      ? box.open(endpoint.previousSecret)
      : undefined;
  return previous === undefined ? [current] : [current, previous];
}

/**
 * The webhook queue's consumer, in the worker process: an `events` job becomes one delivery per
 * endpoint of the account that wants the event (a row in the log, then a `deliver` job), and a
 * `deliver` job makes one attempt. A 2xx answer succeeds; anything else is retried by BullMQ with
 * webhookRetryDelayMs until WEBHOOK_ATTEMPTS, every attempt written to the delivery log.
 */
export function createWebhookWorker(deps: {
  config: Config;
  webhooks: WebhooksRepository;
  events: WebhookEventQueue;
  box: WebhookSecretBox;
  connection: ConnectionOptions;
  log: Logger;
  /** DNS for the targets (tests pass their own to play a rebinding resolver). */
  lookup?: Lookup;
  onDelivery?: (outcome: 'succeeded' | 'retried' | 'failed') => void;
}) {
  const { config, webhooks, log, onDelivery = () => {} } = deps;

  const fanOut = async ({ userId, events }: WebhookEventsJobData) => {
    const endpoints = await webhooks.subscribers(userId, [...new Set(events.map((event) => event.type))]);
    const rows = events.flatMap((event) => {
      const payload = JSON.stringify(event);
      return endpoints
        .filter((endpoint) => endpoint.events.includes(event.type))
        .map((endpoint) => ({ endpointId: endpoint.id, event: event.type, eventId: event.id, payload }));
    });
    const ids = await webhooks.createDeliveries(rows);
    await deps.events.queue.addBulk(
      ids.map((deliveryId) => ({ name: WEBHOOK_DELIVERY_JOB, data: { deliveryId }, opts: webhookDeliveryJobOptions(deliveryId) })),
    );
  };

  /**
   * One POST of the delivery, to the address the URL's host resolved to and was checked at now;
   * `refused` when that address is not one deliveries may reach (a host that does not resolve is
   * an attempt that failed, retried like a refused connection).
   */
  const attempt = async (
    target: string,
    delivery: WebhookDeliveryRecord,
    secrets: string[],
  ): Promise<SendResult | { kind: 'refused'; error: string }> => {
    const url = new URL(target);
    let address: LookupAddress;
    try {
      address = await resolvePublicAddress(url.hostname, { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, lookup: deps.lookup });
    } catch (error) {
      if (error instanceof RefusedAddressError) return { kind: 'refused', error: error.message };
      if (error instanceof UnresolvedHostError) return { kind: 'failed', error: error.message, durationMs: 0 };
      throw error;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': delivery.eventId,
      'webhook-event': delivery.event,
      [WEBHOOK_SIGNATURE_HEADER.toLowerCase()]: signWebhook(delivery.payload, secrets, timestamp),
    };
    return sendRequest(url, address, delivery.payload, headers, config.WEBHOOK_TIMEOUT_MS);
  };

  const deliver = async (job: Job<WebhookDeliveryJobData>) => {
    const found = await webhooks.findDelivery(job.data.deliveryId);
    // Deleted with its endpoint, or pruned: nothing left to send.
    if (!found) return;
    const { delivery, endpoint } = found;
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    /** Ends the delivery without sending it: nothing a retry would change. */
    const giveUp = async (error: string) => {
      await webhooks.recordAttempt(delivery.id, {
        status: 'failed',
        responseStatus: null,
        responseBody: null,
        error,
        durationMs: 0,
      });
      onDelivery('failed');
      throw new UnrecoverableError(error);
    };
    if (!endpoint.enabled) return giveUp('the endpoint is disabled');
    const secrets = signingSecrets(endpoint, deps.box, new Date());
    if (!secrets) return giveUp("the endpoint's secret cannot be read with this WEBHOOK_SECRET_KEY: rotate it");
    const result = await attempt(endpoint.url, delivery, secrets);
    if (result.kind === 'refused') return giveUp(result.error);
    const succeeded = result.kind === 'answered' && result.status >= 200 && result.status < 300;
    await webhooks.recordAttempt(delivery.id, {
      status: succeeded ? 'succeeded' : lastAttempt ? 'failed' : 'pending',
      responseStatus: result.kind === 'answered' ? result.status : null,
      responseBody: result.kind === 'answered' ? result.body : null,
      error: result.kind === 'failed' ? result.error : null,
      durationMs: result.durationMs,
    });
    if (succeeded) {
      onDelivery('succeeded');
      return;
    }
    onDelivery(lastAttempt ? 'failed' : 'retried');
    throw new Error(result.kind === 'answered' ? `answered ${result.status}` : result.error);
  };

  const worker = new Worker<WebhookJobData>(
    WEBHOOK_QUEUE,
    async (job) => {
      if (job.name === WEBHOOK_EVENTS_JOB) return fanOut(job.data as WebhookEventsJobData);
      if (job.name === WEBHOOK_DELIVERY_JOB) return deliver(job as Job<WebhookDeliveryJobData>);
      throw new UnrecoverableError(`unexpected webhook job "${job.name}"`);
    },
    {
      connection: deps.connection,
      prefix: config.QUEUE_PREFIX,
      concurrency: config.WEBHOOK_CONCURRENCY,
      settings: { backoffStrategy: (attemptsMade: number) => webhookRetryDelayMs(attemptsMade, config.WEBHOOK_RETRY_BASE_MS) },
    },
  );
  worker.on('failed', (job, error) => {
    if (job?.name === WEBHOOK_EVENTS_JOB) log.warn({ jobId: job.id, err: error }, 'webhook events not turned into deliveries');
  });
  return worker;
}
