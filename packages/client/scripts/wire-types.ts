// Which schemas of @deeplink/core become the client's wire types, and the text of
// src/generated/wire-types.ts they make. Responses are what the API sends (zod's output side);
// bodies and queries are what it accepts (the input side: defaults make fields optional).
import {
  createImportBodySchema,
  importRowsResponseSchema,
  importSchema,
  listImportRowsQuerySchema,
  accountExportQuerySchema,
  analyticsAccountExportRowSchema,
  analyticsExportQuerySchema,
  analyticsExportRowSchema,
  androidLinkSchema,
  apiKeyListItemSchema,
  apiKeySchema,
  appSchema,
  appWithKeySchema,
  authResultSchema,
  changePasswordBodySchema,
  createApiKeyBodySchema,
  createAppBodySchema,
  updateAppBodySchema,
  createDomainBodySchema,
  createLinkBodySchema,
  domainSchema,
  errorDetailSchema,
  errorEnvelopeSchema,
  EXPORT_FORMATS,
  EXPORT_LAYOUTS,
  iosLinkSchema,
  LINK_LIST_EXTRAS,
  LINK_SORT_FIELDS,
  linkAnalyticsQuerySchema,
  linkAnalyticsSchema,
  linkListItemSchema,
  linkListResponseSchema,
  linkQrQuerySchema,
  linkQrRenderSchema,
  slugAvailabilityQuerySchema,
  slugAvailabilitySchema,
  linkSchema,
  linkSummarySchema,
  listLinksQuerySchema,
  loginBodySchema,
  paginationSchema,
  QR_FORMATS,
  registerBodySchema,
  socialPreviewSchema,
  summaryAnalyticsQuerySchema,
  summaryAnalyticsSchema,
  tagListResponseSchema,
  TIME_BUCKETS,
  updateDomainBodySchema,
  updateLinkBodySchema,
  userSchema,
  createWebhookBodySchema,
  listWebhookDeliveriesQuerySchema,
  updateWebhookBodySchema,
  webhookDeliveryListResponseSchema,
  webhookDeliverySchema,
  webhookEventSchema,
  webhookSchema,
  webhookWithSecretSchema,
  WEBHOOK_EVENTS,
} from '@deeplink/core';
import { z } from 'zod';
import { emitDeclarations, type JsonSchema } from './json-schema-to-ts.js';

interface WireType {
  name: string;
  schema: z.ZodType;
  io: 'input' | 'output';
  description: string;
}

const response = (name: string, schema: z.ZodType, description: string): WireType => ({ name, schema, io: 'output', description });
const request = (name: string, schema: z.ZodType, description: string): WireType => ({ name, schema, io: 'input', description });

/** In dependency order: a type referenced by a later one is declared first and named there. */
export const WIRE_TYPES: readonly WireType[] = [
  response('User', userSchema, 'An account. The password is never returned.'),
  response('AuthResult', authResultSchema, 'What register and login return: the user and a login token (a JWT).'),
  request('RegisterBody', registerBodySchema, 'Body of POST /auth/register.'),
  request('LoginBody', loginBodySchema, 'Body of POST /auth/login.'),
  request('ChangePasswordBody', changePasswordBodySchema, 'Body of POST /auth/password.'),
  request('CreateApiKeyBody', createApiKeyBodySchema, 'Body of POST /auth/api-keys.'),
  response('ApiKey', apiKeySchema, 'An API key as it is created: the only time `key`, the secret, is returned.'),
  response('ApiKeyListItem', apiKeyListItemSchema, 'An API key as the key list shows it: never the secret.'),
  response('AndroidLink', androidLinkSchema, 'Android destination of a link.'),
  response('IosLink', iosLinkSchema, 'iOS destination of a link.'),
  response(
    'SocialPreview',
    socialPreviewSchema,
    'What social networks and chat apps show for a link (served to their link-preview crawlers).',
  ),
  response('Link', linkSchema, 'A dynamic link; timestamps are ISO 8601 strings in UTC.'),
  response('LinkSummary', linkSummarySchema, 'A link without its platform fields.'),
  response(
    'LinkListItem',
    linkListItemSchema,
    'An item of the link list: the summary, plus `clicks` and `tags` when `include` asks for them.',
  ),
  response('Pagination', paginationSchema, 'Where a page sits in the whole list.'),
  response('LinkPage', linkListResponseSchema.shape.data, 'One page of links.'),
  response('TagCount', tagListResponseSchema.shape.data.shape.tags.element, "A tag with how many of the caller's links carry it."),
  request('CreateLinkBody', createLinkBodySchema, 'Body of POST /links.'),
  request('UpdateLinkBody', updateLinkBodySchema, 'Body of PUT /links/:id: a JSON Merge Patch; `null` clears an optional field.'),
  response('LinkSortField', z.enum(LINK_SORT_FIELDS), 'Fields the link list can sort by.'),
  response('LinkListExtra', z.enum(LINK_LIST_EXTRAS), 'What `include` can add to the items of the link list.'),
  request('ListLinksQuery', listLinksQuerySchema, 'Query of GET /links.'),
  response('TimeBucket', z.enum(TIME_BUCKETS), 'Granularity of an analytics time series.'),
  request('LinkAnalyticsQuery', linkAnalyticsQuerySchema, 'Query of GET /analytics/links/:id.'),
  request('SummaryAnalyticsQuery', summaryAnalyticsQuerySchema, 'Query of GET /analytics/summary.'),
  response('ExportFormat', z.enum(EXPORT_FORMATS), 'Format of an analytics export.'),
  response('ExportLayout', z.enum(EXPORT_LAYOUTS), 'Shape of an analytics export.'),
  request('AnalyticsExportQuery', analyticsExportQuerySchema, 'Query of GET /analytics/links/:id/export.'),
  request('AccountExportQuery', accountExportQuerySchema, 'Query of GET /analytics/export, over the whole account.'),
  response('LinkAnalytics', linkAnalyticsSchema, 'Clicks of one link over a range.'),
  response('SummaryAnalytics', summaryAnalyticsSchema, 'Totals over the whole account.'),
  response('AnalyticsExportRow', analyticsExportRowSchema, 'One row of a long export.'),
  response(
    'AccountExportRow',
    analyticsAccountExportRowSchema,
    "One row of the account-wide long export: a per-link row led by its link's id.",
  ),
  response('QrFormat', z.enum(QR_FORMATS), "Image formats of a link's QR code."),
  request('LinkQrQuery', linkQrQuerySchema, 'Query of GET /links/:id/qr.'),
  request('SlugAvailabilityQuery', slugAvailabilityQuerySchema, 'Query of GET /links/slug-availability.'),
  response('SlugAvailability', slugAvailabilitySchema, 'Whether a slug is free on a domain, and the short URL a link there has.'),
  request('LinkQrRender', linkQrRenderSchema, 'Body of POST /links/:id/qr: the same options, and a logo (a PNG in base64).'),
  response('App', appSchema, "An app of the account: an iOS app or an Android app, with its app key's prefix."),
  response('AppWithKey', appWithKeySchema, 'An app with its app key in full: only when the app is registered and when its key is rotated.'),
  request('CreateAppBody', createAppBodySchema, 'Body of POST /apps: an iOS or an Android app, told apart by `platform`.'),
  request('UpdateAppBody', updateAppBodySchema, "Body of PATCH /apps/:id: the app's settings that may change."),
  response('Domain', domainSchema, 'A custom short-link domain.'),
  request('CreateDomainBody', createDomainBodySchema, 'Body of POST /domains.'),
  request('UpdateDomainBody', updateDomainBodySchema, 'Body of PUT /domains/:id.'),
  request('CreateImportBody', createImportBodySchema, 'Body of POST /imports: the format of the file, its domain and options.'),
  response('Import', importSchema, 'An import of links: its status, progress and the count of each outcome.'),
  response('ImportRowPage', importRowsResponseSchema.shape.data, 'One page of the report of an import, by line.'),
  request('ListImportRowsQuery', listImportRowsQuerySchema, 'Query of GET /imports/:id/rows.'),
  response('WebhookEventType', z.enum(WEBHOOK_EVENTS), 'What a webhook endpoint can subscribe to.'),
  response('Webhook', webhookSchema, 'A webhook endpoint of the account: never its secret.'),
  response(
    'WebhookWithSecret',
    webhookWithSecretSchema,
    'A webhook endpoint with its signing secret: only when it is created and when its secret is rotated.',
  ),
  request('CreateWebhookBody', createWebhookBodySchema, 'Body of POST /webhooks.'),
  request(
    'UpdateWebhookBody',
    updateWebhookBodySchema,
    'Body of PATCH /webhooks/:id: the fields sent change; null removes the description.',
  ),
  response('WebhookDelivery', webhookDeliverySchema, "One delivery of an event to an endpoint, as the endpoint's log shows it."),
  response('WebhookDeliveryPage', webhookDeliveryListResponseSchema.shape.data, "One page of an endpoint's delivery log, newest first."),
  request('ListWebhookDeliveriesQuery', listWebhookDeliveriesQuerySchema, 'Query of GET /webhooks/:id/deliveries.'),
  response(
    'WebhookEvent',
    webhookEventSchema,
    'The body of a webhook delivery, told apart by `type` (verify its signature first: docs/webhooks.md).',
  ),
  response('ErrorCode', errorEnvelopeSchema.shape.error.shape.code, 'Error codes the API answers with.'),
  response('ErrorDetail', errorDetailSchema, 'One problem with one field of a request.'),
  response('ErrorEnvelope', errorEnvelopeSchema, 'The body of every failure.'),
];

export const GENERATED_PATH = 'src/generated/wire-types.ts';

const HEADER = `// Generated from the zod schemas of @deeplink/core by scripts/generate-types.ts: do not edit.
// Regenerate with \`npm run generate -w packages/client\` (the build does it, and a test fails while
// this file is stale). It imports nothing, so the published declarations need neither the core nor zod.
`;

/** The text of the generated file. */
export function generateWireTypes(): string {
  const declarations = emitDeclarations(
    WIRE_TYPES.map(({ name, schema, io, description }) => ({
      name,
      description,
      schema: z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema,
    })),
  );
  return `${HEADER}\n${declarations}`;
}
