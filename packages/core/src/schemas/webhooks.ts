import { z } from 'zod';
import { linkSchema, pageQueryFields, paginationSchema } from './links.js';
import { LIVE_RECENT_CLICKS, liveClickSchema } from './live.js';
import { storableText, successEnvelope, timestampSchema, webUrlSchema } from './common.js';

/** What an endpoint can subscribe to; `click` is one delivery per rollup commit of the account's clicks. */
export const WEBHOOK_EVENTS = ['link.created', 'link.updated', 'link.deleted', 'click'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Endpoints one account may have. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** The newest clicks a `click` event lists (its counts cover them all). */
export const WEBHOOK_RECENT_CLICKS = 100;

/** Where deliveries go: http(s), with a host, and no user name or password in it (they would be sent to anyone it redirects to, and logged). */
export const webhookUrlSchema = webUrlSchema
  .refine((value) => {
    const url = URL.parse(value);
    return url === null || (url.username === '' && url.password === '');
  }, 'must not carry a user name or password')
  .meta({ format: 'uri', example: 'https://hooks.example.com/deeplink' });

const eventsSchema = z
  .array(z.enum(WEBHOOK_EVENTS, { error: `must be one of ${WEBHOOK_EVENTS.join(', ')}` }))
  .min(1, 'must name at least one event')
  .max(WEBHOOK_EVENTS.length * 2, `must name at most ${WEBHOOK_EVENTS.length * 2} events`)
  .transform((events) => [...new Set(events)])
  .meta({ description: `The events the endpoint receives: ${WEBHOOK_EVENTS.join(', ')}`, example: ['link.created', 'click'] });

const descriptionSchema = storableText().trim().max(200, 'must be at most 200 characters');

export const createWebhookBodySchema = z
  .object({
    url: webhookUrlSchema,
    events: eventsSchema,
    enabled: z.boolean().default(true).meta({ description: 'Whether events are sent to it; true by default' }),
    description: descriptionSchema.optional().meta({ example: 'Order system' }),
  })
  .strict();
export type CreateWebhookBody = z.input<typeof createWebhookBodySchema>;
export type CreateWebhookInput = z.output<typeof createWebhookBodySchema>;

/** PATCH: the fields sent change, the others stay; a null description removes it. */
export const updateWebhookBodySchema = z
  .object({
    url: webhookUrlSchema.optional(),
    events: eventsSchema.optional(),
    enabled: z.boolean().optional(),
    description: descriptionSchema.nullable().optional(),
  })
  .strict();
export type UpdateWebhookBody = z.output<typeof updateWebhookBodySchema>;

export const webhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    enabled: z.boolean(),
    description: z.string().optional(),
    previousSecretExpiresAt: timestampSchema.optional().meta({
      description: 'After a rotation: until when the replaced secret still signs deliveries beside the new one',
    }),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof webhookSchema>;

export const webhookWithSecretSchema = webhookSchema
  .extend({
    secret: z.string().meta({
      description: 'The signing secret (whsec_…): returned when the endpoint is created and when its secret is rotated, never again',
      example: 'whsec_3q2-7wEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    }),
  })
  .meta({ id: 'WebhookWithSecret' });
export type WebhookWithSecret = z.infer<typeof webhookWithSecretSchema>;

export const webhookResponseSchema = successEnvelope(z.object({ webhook: webhookSchema }));
export const webhookWithSecretResponseSchema = successEnvelope(z.object({ webhook: webhookWithSecretSchema }));
export const webhookListResponseSchema = successEnvelope(z.object({ webhooks: z.array(webhookSchema) }));

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    event: z.enum(WEBHOOK_EVENTS),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES).meta({
      description: 'pending: queued or waiting for a retry; succeeded: a 2xx answer; failed: out of attempts (or refused)',
    }),
    attempts: z.number().int(),
    responseStatus: z.number().int().nullable().meta({ description: "The last attempt's HTTP status; null without an answer" }),
    responseBody: z.string().nullable().meta({ description: 'The first bytes of the last answer (at most 512)' }),
    error: z.string().nullable().meta({ description: 'Why the last attempt got no answer (timeout, refused address…)' }),
    durationMs: z.number().int().nullable().meta({ description: 'How long the last attempt took' }),
    createdAt: timestampSchema,
    lastAttemptAt: timestampSchema.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const listWebhookDeliveriesQuerySchema = z
  .object(
    pageQueryFields({
      maxLimit: 100,
      defaultLimit: 20,
      page: 'Page number, from 1; newest deliveries first',
      limit: 'Items per page, 1-100',
    }),
  )
  .strict();
export type ListWebhookDeliveriesQuery = z.infer<typeof listWebhookDeliveriesQuerySchema>;

export const webhookDeliveryListResponseSchema = successEnvelope(
  z.object({ deliveries: z.array(webhookDeliverySchema), pagination: paginationSchema }),
);
export const webhookDeliveryResponseSchema = successEnvelope(z.object({ delivery: webhookDeliverySchema }));

const webhookId = z.string().max(64).meta({
  description: "The webhook endpoint's id (a UUID), as returned when it was created",
  example: '3d0c8e1a-5b7f-4e9a-a1c2-7f6e5d4c3b2a',
});

/** `:id` of a webhook endpoint. */
export const webhookIdParamsSchema = z.object({ id: webhookId });

/** `:id` of a webhook endpoint and `:deliveryId` of one of its deliveries. */
export const webhookDeliveryParamsSchema = z.object({
  id: webhookId,
  deliveryId: z
    .string()
    .max(64)
    .meta({ description: 'The delivery id, as the delivery log lists it', example: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d' }),
});

const eventEnvelope = <T extends WebhookEventType, D extends z.ZodType>(type: T, data: D, description: string) =>
  z
    .object({
      id: z.string().meta({ description: 'The event id: the same on every attempt and resend, so a receiver can drop repeats' }),
      type: z.literal(type),
      createdAt: timestampSchema,
      data,
    })
    .meta({ id: `WebhookEvent_${type.replace('.', '_')}`, description });

export const linkCreatedEventSchema = eventEnvelope('link.created', z.object({ link: linkSchema }), 'A link was created');
export const linkUpdatedEventSchema = eventEnvelope(
  'link.updated',
  z.object({ link: linkSchema }),
  'A link was changed: the link as it is now',
);
export const linkDeletedEventSchema = eventEnvelope(
  'link.deleted',
  z.object({ link: z.object({ id: z.string() }) }),
  'A link was deleted, with its clicks',
);
export const clickEventSchema = eventEnvelope(
  'click',
  z.object({
    committedAt: timestampSchema.meta({ description: 'When the clicks were counted' }),
    totalClicks: z.number().int(),
    links: z.record(z.string(), z.number().int()).meta({ description: 'Clicks per link id' }),
    recent: z
      .array(liveClickSchema)
      .meta({ description: `The newest clicks first: at most ${WEBHOOK_RECENT_CLICKS}, and at most ${LIVE_RECENT_CLICKS} of each link` }),
  }),
  "Clicks on the account's links, counted together (bots left out)",
);

/** The body of every delivery, told apart by `type`. */
export const webhookEventSchema = z
  .discriminatedUnion('type', [linkCreatedEventSchema, linkUpdatedEventSchema, linkDeletedEventSchema, clickEventSchema])
  .meta({ id: 'WebhookEvent' });
export type WebhookEvent = z.infer<typeof webhookEventSchema>;
