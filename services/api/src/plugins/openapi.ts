import swagger from '@fastify/swagger';
import { REFERENCE_CSS, renderReferencePage } from '../docs/reference-page.js';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { WEBHOOK_EVENTS } from '@deeplink/core';
import { WEBHOOK_SIGNATURE_HEADER } from '@deeplink/core/webhooks';
import { isFirebaseRestPath } from './error-handler.js';
import { setPageHeaders } from './page-headers.js';

type Document = ReturnType<typeof jsonSchemaTransformObject> & {
  components: { schemas?: Record<string, Record<string, unknown>>; headers?: Record<string, unknown> };
  webhooks?: Record<string, unknown>;
};
interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}
interface Operation {
  requestBody?: { content?: Record<string, unknown> };
  responses: Record<string, Response>;
}

/** Sent on every request the rate limit counted (not when Redis could not count it). */
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'When the window ends, in Unix seconds', schema: { type: 'integer', minimum: 0 } },
};
const RETRY_AFTER = { description: 'Seconds to wait before retrying, at least 1', required: true, schema: { type: 'integer', minimum: 1 } };

/** Fastify reads a body on these methods only, so only they can answer 413 and 415. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
/** The error shape of a path: the envelope, or Google's on Firebase's REST paths. */
const errorResponse = (path: string, description: string): Response => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${isFirebaseRestPath(path) ? 'GoogleError' : 'Error'}` } } },
});
const bodyErrors = (path: string, bodyLimit: number, mediaTypes: string[]) => ({
  413: errorResponse(path, `The body is larger than the limit (${bodyLimit} bytes)`),
  415: errorResponse(path, `The body is not ${mediaTypes.join(' or ')}`),
});

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/**
 * What every operation shares but no route schema says: the rate-limit headers on each answer,
 * Retry-After on 429, and 413/415 where a body is read. Then drops the component schemas no
 * operation reaches (zod registers an input and an output variant of each).
 */
function completeDocument(document: Document, bodyLimit: number): Document {
  const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, operation]) => ({ path, method, operation })),
  );
  for (const { path, method, operation } of operations) {
    // A route that takes another body (an import's CSV file) says its own limit, which stays.
    if (BODY_METHODS.has(method)) {
      const mediaTypes = Object.keys(operation.requestBody?.content ?? { 'application/json': {} });
      operation.responses = { ...operation.responses, ...bodyErrors(path, bodyLimit, mediaTypes), ...operation.responses };
    }
    for (const [status, response] of Object.entries(operation.responses)) {
      response.headers = {
        ...response.headers,
        ...Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, headerRef(name)])),
        ...(status === '429' && { 'Retry-After': headerRef('Retry-After') }),
      };
    }
  }
  document.components.headers = { ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER };
  document.webhooks = webhookOperations();
  // zod writes `$schema` and a fragment `$id` into each component; JSON Schema 2020-12 forbids the fragment.
  document.components.schemas = Object.fromEntries(
    Object.entries(reachableSchemas(document)).map(([name, { $id, $schema, ...schema }]) => [name, schema]),
  );
  return document;
}

/**
 * What the service POSTs to webhook endpoints (OpenAPI 3.1's `webhooks`): one entry per event,
 * its body a component schema, so generated clients get the payload types too.
 */
function webhookOperations(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENTS.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          summary: `The ${type} event, signed in the ${WEBHOOK_SIGNATURE_HEADER} header (docs/webhooks.md)`,
          parameters: [
            {
              name: WEBHOOK_SIGNATURE_HEADER,
              in: 'header',
              required: true,
              description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body"> (two v1 entries while a rotated-out secret still signs)',
              schema: { type: 'string' },
            },
            {
              name: 'Webhook-Id',
              in: 'header',
              required: true,
              description: "The event's id, the same on every attempt",
              schema: { type: 'string' },
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/WebhookEvent_${type.replace('.', '_')}` } } },
          },
          responses: { '2XX': { description: 'Received: any 2xx answer ends the delivery; anything else is retried' } },
        },
      },
    ]),
  );
}

/** The component schemas the paths refer to, directly or through other components. */
function reachableSchemas(document: Document): Record<string, Record<string, unknown>> {
  const all = document.components.schemas ?? {};
  const reached = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      const name = key === '$ref' && typeof inner === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(inner)?.[1] : undefined;
      if (name !== undefined && !reached.has(name)) {
        reached.add(name);
        visit(all[name]);
      } else visit(inner);
    }
  };
  visit(document.paths);
  visit(document.webhooks);
  return Object.fromEntries(Object.entries(all).filter(([name]) => reached.has(name)));
}

/** The OpenAPI document, generated from the route schemas: JSON at /api/docs/json, a browsable page at /api/docs. */
export const openApi = fp<{ serverUrl: string; bodyLimit: number }>(
  async (app, { serverUrl, bodyLimit }) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Deep-link service API',
          version: '1.0.0',
          description:
            'Short links that route each visitor to the right app or page, with click analytics. ' +
            'Every response uses the envelope { success, data } or { success: false, error: { code, message, details } }. ' +
            'Query parameters an operation does not define are refused with 400, each named in error.details. ' +
            "The Firebase Dynamic Links operations under /v1 answer in FDL's shapes instead, errors as { error: { code, message, status } }, " +
            "and ignore query parameters they do not define, as Google's APIs did.",
        },
        servers: [{ url: serverUrl }],
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'An API key (dlk_…) or the token from register/login' },
            apiKeyQuery: {
              type: 'apiKey',
              in: 'query',
              name: 'key',
              description: 'An API key (dlk_…) in the query, as Firebase Dynamic Links took it: the /v1 operations only',
            },
            appKey: {
              type: 'apiKey',
              in: 'header',
              name: 'X-App-Key',
              description: "An app's publishable key (dla_…): the App SDK operations only",
            },
          },
        },
        security: [{ bearer: [] }],
      },
      transform: jsonSchemaTransform,
      transformObject: (input) => completeDocument(jsonSchemaTransformObject(input) as Document, bodyLimit),
    });
    // The reference runs on the dashboard's origin: it gets the dashboard's strict headers (no
    // script at all, one style sheet of its own), and cannot be framed. The document is complete
    // once every route is registered, so both are built at the first request and kept.
    await app.register(async (docs) => {
      docs.addHook('onSend', setPageHeaders);
      let page: string | undefined;
      const hide = { schema: { hide: true } };
      docs.get('/api/docs/json', hide, async () => app.swagger());
      docs.get('/api/docs', hide, async (_request, reply) => {
        page ??= renderReferencePage(app.swagger() as Parameters<typeof renderReferencePage>[0], '/api/docs/reference.css');
        return reply.type('text/html; charset=utf-8').send(page);
      });
      docs.get('/api/docs/reference.css', hide, async (_request, reply) => reply.type('text/css; charset=utf-8').send(REFERENCE_CSS));
    });
  },
  { name: 'openapi' },
);
