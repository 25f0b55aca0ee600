import { APP_KEY_HEADER, appOpenBodySchema, appOpenResponseSchema, errorEnvelopeSchema } from '@deeplink/core';
import type { AppRecord } from '@deeplink/core/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppOpenService } from '../domain/app-open-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The app whose key the request carried: set on the App SDK routes once the key is checked. */
    appCaller?: AppRecord;
  }
}

/**
 * What an app shipped to users may call, with its publishable key in X-App-Key. Bearer credentials
 * mean nothing here (the authentication hook skips `rateLimitScope: 'app'` routes), and an app
 * key means nothing anywhere else. Each call counts against its address's limit on arrival and
 * against its key's once the key is known.
 */
export const appSdkRoutes: FastifyPluginAsyncZod<{ opens: AppOpenService }> = async (app, { opens }) => {
  app.decorateRequest('appCaller', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers[APP_KEY_HEADER];
    request.appCaller = await opens.authenticate(typeof header === 'string' ? header.trim() : undefined);
    await app.chargeRateLimit(request, reply);
  });

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
};
