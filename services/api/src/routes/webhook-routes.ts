import {
  createWebhookBodySchema,
  listWebhookDeliveriesQuerySchema,
  MAX_WEBHOOK_ENDPOINTS,
  nullDataSchema,
  updateWebhookBodySchema,
  webhookDeliveryListResponseSchema,
  webhookDeliveryParamsSchema,
  webhookDeliveryResponseSchema,
  webhookIdParamsSchema,
  webhookListResponseSchema,
  webhookResponseSchema,
  webhookWithSecretResponseSchema,
} from '@deeplink/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { WEBHOOK_SECRET_OVERLAP_HOURS, type WebhooksService } from '../domain/webhooks-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

/** The caller's webhook endpoints, their secrets and their delivery logs (docs/webhooks.md). */
export const webhookRoutes: FastifyPluginAsyncZod<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  app.addHook('onRequest', requirePrincipal);
  const tags = ['Webhooks'];

  app.post(
    '/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: `Add a webhook endpoint (at most ${MAX_WEBHOOK_ENDPOINTS} per account); its signing secret is shown this once`,
        body: createWebhookBodySchema,
        response: {
          201: webhookWithSecretResponseSchema,
          ...authenticatedErrors,
          409: authenticatedErrors[400].describe(`The account has ${MAX_WEBHOOK_ENDPOINTS} endpoints already`),
        },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { webhook: await webhooks.create(principalOf(request), request.body) } }),
  );

  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: "The caller's webhook endpoints, oldest first",
        response: { 200: webhookListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { webhooks: await webhooks.list(principalOf(request)) } }) as const,
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Get a webhook endpoint (never its secret)',
        params: webhookIdParamsSchema,
        response: { 200: webhookResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { webhook: await webhooks.get(principalOf(request), request.params.id) } }) as const,
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change the URL, events, enabled flag or description (the fields sent; null removes the description)',
        params: webhookIdParamsSchema,
        body: updateWebhookBodySchema,
        response: { 200: webhookResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) =>
      ({ success: true, data: { webhook: await webhooks.update(principalOf(request), request.params.id, request.body) } }) as const,
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Remove a webhook endpoint and its delivery log',
        params: webhookIdParamsSchema,
        response: { 200: nullDataSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      await webhooks.delete(principalOf(request), request.params.id);
      return { success: true, data: null } as const;
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: `Give the endpoint a new signing secret, shown this once; the old one signs too for ${WEBHOOK_SECRET_OVERLAP_HOURS} hours`,
        params: webhookIdParamsSchema,
        response: { 200: webhookWithSecretResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) =>
      ({ success: true, data: { webhook: await webhooks.rotateSecret(principalOf(request), request.params.id) } }) as const,
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: "A page of the endpoint's deliveries, newest first",
        params: webhookIdParamsSchema,
        querystring: listWebhookDeliveriesQuerySchema,
        response: { 200: webhookDeliveryListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) =>
      ({ success: true, data: await webhooks.deliveries(principalOf(request), request.params.id, request.query) }) as const,
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/resend',
    {
      schema: {
        operationId: 'resendWebhookDelivery',
        tags,
        summary: "Send a delivery's event again: a new delivery with its own attempts, the same event id and body",
        params: webhookDeliveryParamsSchema,
        response: { 201: webhookDeliveryResponseSchema, ...authenticatedErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send({
        success: true,
        data: { delivery: await webhooks.resend(principalOf(request), request.params.id, request.params.deliveryId) },
      }),
  );
};
