import type { Link } from '@deeplink/core';
import { type WebhookEventQueue, webhookEvent } from '@deeplink/core/webhooks';
import { withTimeout } from '@deeplink/core/runtime';
import type { FastifyBaseLogger } from 'fastify';

/** How long queueing a change's events may hold its answer up. */
const QUEUE_TIMEOUT_MS = 2_000;

/**
 * The link.* webhook events, handed to the worker after the change has committed (one queue job
 * per request, a bulk create included). The change stands whatever happens here: a queue that
 * cannot be reached costs the events, which is logged, never the request.
 */
export function linkEvents(deps: { queue: Pick<WebhookEventQueue, 'send'>; log: FastifyBaseLogger }) {
  const send = async (userId: string, events: Parameters<WebhookEventQueue['send']>[1]) => {
    try {
      await withTimeout(deps.queue.send(userId, events), QUEUE_TIMEOUT_MS, 'webhook event queue add');
    } catch (error) {
      deps.log.warn({ err: error, userId, events: events.length }, 'link webhook events not queued');
    }
  };
  return {
    created: (userId: string, links: Link[]) =>
      send(
        userId,
        links.map((link) => webhookEvent('link.created', { link })),
      ),
    updated: (userId: string, link: Link) => send(userId, [webhookEvent('link.updated', { link })]),
    deleted: (userId: string, ids: string[]) =>
      send(
        userId,
        ids.map((id) => webhookEvent('link.deleted', { link: { id } })),
      ),
  };
}
export type LinkEvents = ReturnType<typeof linkEvents>;
