import {
  conflict,
  type CreateWebhookInput,
  type ListWebhookDeliveriesQuery,
  MAX_WEBHOOK_ENDPOINTS,
  notFound,
  type Pagination,
  type UpdateWebhookBody,
  type Webhook,
  type WebhookDelivery,
  type WebhookWithSecret,
} from '@deeplink/core';
import {
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
  WebhookEndpointsFullError,
  type WebhooksRepository,
} from '@deeplink/core/db';
import {
  generateWebhookSecret,
  WEBHOOK_DELIVERY_JOB,
  webhookDeliveryJobOptions,
  type WebhookEventQueue,
  type WebhookSecretBox,
} from '@deeplink/core/webhooks';
import type { Principal } from './auth-service.js';

/** How long a rotated-out secret keeps signing beside the new one, so receivers can switch without missing a delivery. */
export const WEBHOOK_SECRET_OVERLAP_HOURS = 24;

const toWebhook = (endpoint: WebhookEndpointRecord, now = new Date()): Webhook => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  enabled: endpoint.enabled,
  ...(endpoint.description !== null && { description: endpoint.description }),
  ...(endpoint.previousSecretExpiresAt &&
    endpoint.previousSecretExpiresAt > now && { previousSecretExpiresAt: endpoint.previousSecretExpiresAt.toISOString() }),
  createdAt: endpoint.createdAt.toISOString(),
  updatedAt: endpoint.updatedAt.toISOString(),
});

const toDelivery = (delivery: WebhookDeliveryRecord): WebhookDelivery => ({
  id: delivery.id,
  event: delivery.event,
  status: delivery.status,
  attempts: delivery.attempts,
  responseStatus: delivery.responseStatus,
  responseBody: delivery.responseBody,
  error: delivery.error,
  durationMs: delivery.durationMs,
  createdAt: delivery.createdAt.toISOString(),
  lastAttemptAt: delivery.lastAttemptAt?.toISOString() ?? null,
});

/**
 * An account's webhook endpoints and their delivery logs. Another account's endpoint is a 404,
 * exactly as one that does not exist: its id says nothing. Secrets are returned in clear only by
 * create and rotate, and stored sealed (WebhookSecretBox).
 */
export function webhooksService(deps: { webhooks: WebhooksRepository; box: WebhookSecretBox; queue: WebhookEventQueue }) {
  const { webhooks } = deps;

  const owned = async (principal: Principal, id: string): Promise<WebhookEndpointRecord> => {
    const endpoint = await webhooks.findOwned(principal.userId, id);
    if (!endpoint) throw notFound('Webhook not found');
    return endpoint;
  };

  return {
    async create(principal: Principal, body: CreateWebhookInput): Promise<WebhookWithSecret> {
      const secret = generateWebhookSecret();
      try {
        const endpoint = await webhooks.create(principal.userId, { ...body, secret: deps.box.seal(secret) }, MAX_WEBHOOK_ENDPOINTS);
        return { ...toWebhook(endpoint), secret };
      } catch (error) {
        if (!(error instanceof WebhookEndpointsFullError)) throw error;
        throw conflict(`An account has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`, [
          { field: 'url', message: `would be endpoint ${MAX_WEBHOOK_ENDPOINTS + 1}; the limit is ${MAX_WEBHOOK_ENDPOINTS}` },
        ]);
      }
    },

    async list(principal: Principal): Promise<Webhook[]> {
      return (await webhooks.listByUser(principal.userId)).map((endpoint) => toWebhook(endpoint));
    },

    async get(principal: Principal, id: string): Promise<Webhook> {
      return toWebhook(await owned(principal, id));
    },

    async update(principal: Principal, id: string, changes: UpdateWebhookBody): Promise<Webhook> {
      const endpoint = await webhooks.update(principal.userId, id, changes);
      if (!endpoint) throw notFound('Webhook not found');
      return toWebhook(endpoint);
    },

    async delete(principal: Principal, id: string): Promise<void> {
      if (!(await webhooks.delete(principal.userId, id))) throw notFound('Webhook not found');
    },

    /** A new secret, returned this once; the old one signs too for WEBHOOK_SECRET_OVERLAP_HOURS. */
    async rotateSecret(principal: Principal, id: string): Promise<WebhookWithSecret> {
      const secret = generateWebhookSecret();
      const until = new Date(Date.now() + WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000);
      const endpoint = await webhooks.rotateSecret(principal.userId, id, deps.box.seal(secret), until);
      if (!endpoint) throw notFound('Webhook not found');
      return { ...toWebhook(endpoint), secret };
    },

    async deliveries(
      principal: Principal,
      id: string,
      query: ListWebhookDeliveriesQuery,
    ): Promise<{ deliveries: WebhookDelivery[]; pagination: Pagination }> {
      const endpoint = await owned(principal, id);
      const page = await webhooks.listDeliveries(endpoint.id, { offset: (query.page - 1) * query.limit, limit: query.limit });
      return {
        deliveries: page.deliveries.map(toDelivery),
        pagination: { total: page.total, page: query.page, limit: query.limit, pages: Math.ceil(page.total / query.limit) },
      };
    },

    /** Sends the delivery's event again, as a new delivery with attempts of its own (the same event id and body). */
    async resend(principal: Principal, id: string, deliveryId: string): Promise<WebhookDelivery> {
      const endpoint = await owned(principal, id);
      const original = await webhooks.findEndpointDelivery(endpoint.id, deliveryId);
      if (!original) throw notFound('Delivery not found');
      const delivery = await webhooks.resend(original);
      await deps.queue.queue.add(WEBHOOK_DELIVERY_JOB, { deliveryId: delivery.id }, webhookDeliveryJobOptions(delivery.id));
      return toDelivery(delivery);
    },
  };
}
export type WebhooksService = ReturnType<typeof webhooksService>;
