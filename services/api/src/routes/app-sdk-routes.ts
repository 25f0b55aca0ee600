import {
  APP_KEY_HEADER,
  appInstallBodySchema,
  appInstallResponseSchema,
  appOpenBodySchema,
  appOpenResponseSchema,
  errorEnvelopeSchema,
} from '@deeplink/core';
import type { AppRecord } from '@deeplink/core/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppInstallService } from '../domain/app-install-service.js';
import type { AppOpenService } from '../domain/app-open-service.js';
import { addressSubject } from '../plugins/rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The app whose key the request carried: set on the App SDK routes once the key is checked. */
    appCaller?: AppRecord;
  }
}

/**
 * Any origin may call the App SDK routes: the key is publishable and nothing rides along that a
 * browser would add for a site (no cookie; the key is in a header the page sets itself), so a web
 * app or a Capacitor WebView (origin capacitor://localhost) may call them as a native app does.
 * Set on every answer of these routes, errors and 429s included, so the page can read them.
 */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
};

/** The preflight answer: the method and headers an open or an install sends; browsers may keep it 10 minutes. */
const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': `content-type, ${APP_KEY_HEADER}`,
  'access-control-max-age': '600',
};

/**
 * What an app shipped to users may call, with its publishable key in X-App-Key. Bearer credentials
 * mean nothing here (the authentication hook skips `rateLimitScope: 'app'` routes), and an app
 * key means nothing anywhere else. Each call counts against its address's limit on arrival and
 * against its key's once the key is known.
 */
export const appSdkRoutes: FastifyPluginAsyncZod<{ opens: AppOpenService; installs: AppInstallService }> = async (
  app,
  { opens, installs },
) => {
  app.decorateRequest('appCaller', undefined);
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(CORS_HEADERS);
  });
  app.addHook('onRequest', async (request, reply) => {
    // A browser's preflight carries no key; it was counted against its address on arrival.
    if (request.method === 'OPTIONS') return;
    const header = request.headers[APP_KEY_HEADER];
    request.appCaller = await opens.authenticate(typeof header === 'string' ? header.trim() : undefined);
    await app.chargeRateLimit(request, reply);
    opens.recordCall(request.appCaller, request.routeOptions.url?.endsWith('/app/install') ? 'install' : 'open');
  });

  for (const path of ['/app/open', '/app/install']) {
    app.options(path, { config: { rateLimitScope: 'app' }, schema: { hide: true } }, async (_request, reply) =>
      reply.code(204).headers(PREFLIGHT_HEADERS).send(),
    );
  }

  app.post(
    '/app/open',
    {
      config: { rateLimitScope: 'app' },
      schema: {
        operationId: 'openAppLink',
        tags: ['App SDK'],
        summary: 'Resolve the URL an app was opened with (Universal Link, App Link) to what its link holds for the app, and count the open',
        security: [{ appKey: [] }],
        body: appOpenBodySchema,
        response: {
          200: appOpenResponseSchema,
          400: errorEnvelopeSchema.describe('Invalid request (details name each bad field)'),
          401: errorEnvelopeSchema.describe('Missing, invalid or replaced app key'),
          404: errorEnvelopeSchema.describe("No link of this app's account at this URL (unknown, deleted, expired, or another domain's)"),
          429: errorEnvelopeSchema.describe('Rate limit of the address or of the app key exceeded; see Retry-After'),
          503: errorEnvelopeSchema.describe(
            'The open could not be queued for counting (the queue is unreachable); retry with the same openId',
          ),
        },
      },
    },
    async (request) => ({ success: true, data: await opens.open(request.appCaller!, request.body) }) as const,
  );

  app.post(
    '/app/install',
    {
      config: { rateLimitScope: 'app' },
      schema: {
        operationId: 'attributeAppInstall',
        tags: ['App SDK'],
        summary:
          "An app's first launch: the link that brought the install (deferred deep link), from the Play install referrer, the pasteboard URL or, when turned on, a probabilistic match; counts the install",
        security: [{ appKey: [] }],
        body: appInstallBodySchema,
        response: {
          200: appInstallResponseSchema,
          400: errorEnvelopeSchema.describe('Invalid request (details name each bad field)'),
          401: errorEnvelopeSchema.describe('Missing, invalid or replaced app key'),
          429: errorEnvelopeSchema.describe(
            'Rate limit of the address or of the app key exceeded, or too many unknown install tokens from either; see Retry-After',
          ),
          503: errorEnvelopeSchema.describe(
            'The install could not be queued for counting (the queue is unreachable); retry with the same installId',
          ),
        },
      },
    },
    async (request) =>
      ({
        success: true,
        data: await installs.install(request.appCaller!, request.body, { ip: request.ip, addressKey: addressSubject(request) }),
      }) as const,
  );
};
