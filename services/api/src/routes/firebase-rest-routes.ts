import {
  apiKeyQuerySchema,
  createShortLinkBodySchema,
  createShortLinkResponseSchema,
  googleErrorSchema,
  linkStatsParamsSchema,
  linkStatsQuerySchema,
  linkStatsResponseSchema,
  unauthorized,
} from '@deeplink/core';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FirebaseRestService } from '../domain/firebase-rest-service.js';
import { sendNotFound } from '../plugins/error-handler.js';

const TAGS = ['Firebase Dynamic Links'];
const SECURITY: { [scheme: string]: string[] }[] = [{ apiKeyQuery: [] }, { bearer: [] }];

/** 401 in FDL's words: these routes take the key in `?key=` as FDL's did. */
async function requireKey(request: FastifyRequest): Promise<void> {
  if (!request.principal)
    throw unauthorized(request.authProblem ?? 'An API key is required: send ?key=<API key> or Authorization: Bearer <API key>');
}

/**
 * Firebase Dynamic Links' REST API, at FDL's own paths (/v1/…, not under /api), so a backend that
 * called firebasedynamiclinks.googleapis.com changes only its host and key. Errors come in Google's
 * shape ({ error: { code, message, status } }, see sendError); query parameters these operations do
 * not define are ignored, as Google's APIs ignore their system parameters (`alt`, `prettyPrint`…).
 */
export const firebaseRestRoutes: FastifyPluginAsyncZod<{ firebase: FirebaseRestService }> = async (app, { firebase }) => {
  app.post(
    '/shortLinks',
    {
      config: { apiKeyInQuery: true },
      onRequest: requireKey,
      schema: {
        operationId: 'createShortDynamicLink',
        tags: TAGS,
        summary: "FDL's shortLinks.create: the short link of a long dynamic link or of dynamicLinkInfo, the same one for the same request",
        security: SECURITY,
        querystring: apiKeyQuerySchema,
        body: createShortLinkBodySchema,
        response: {
          200: createShortLinkResponseSchema,
          400: googleErrorSchema.describe('INVALID_ARGUMENT: the body, a field of the link or the domain is not valid'),
          401: googleErrorSchema.describe('UNAUTHENTICATED: missing, invalid or revoked API key'),
          429: googleErrorSchema.describe('RESOURCE_EXHAUSTED: rate limit exceeded; see Retry-After'),
        },
      },
    },
    async (request) => firebase.createShortLink(request.principal!, request.body),
  );

  app.get(
    '/:shortLink/linkStats',
    {
      config: { apiKeyInQuery: true },
      onRequest: requireKey,
      schema: {
        operationId: 'getDynamicLinkStats',
        tags: TAGS,
        summary: "FDL's getLinkStats: a short link's clicks, store redirects, installs, first opens and re-opens per platform",
        security: SECURITY,
        params: linkStatsParamsSchema,
        querystring: linkStatsQuerySchema,
        response: {
          200: linkStatsResponseSchema,
          400: googleErrorSchema.describe('INVALID_ARGUMENT: durationDays is missing or out of range'),
          401: googleErrorSchema.describe('UNAUTHENTICATED: missing, invalid or revoked API key'),
          404: googleErrorSchema.describe("NOT_FOUND: not a short link of yours (unknown, or another account's)"),
          429: googleErrorSchema.describe('RESOURCE_EXHAUSTED: rate limit exceeded; see Retry-After'),
        },
      },
    },
    async (request) => firebase.linkStats(request.principal!, request.params.shortLink, request.query.durationDays),
  );

  // Other paths (and methods) under /v1: the 404 in Google's shape from a route of these paths' own,
  // so they pass the hooks (credentials, rate limit) and never fall through to the dashboard's pages.
  app.all('/', { schema: { hide: true } }, sendNotFound);
  app.all('/*', { schema: { hide: true } }, sendNotFound);
};
