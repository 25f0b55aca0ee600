import {
  apiKeyIdParamsSchema,
  apiKeyListResponseSchema,
  apiKeyResponseSchema,
  authResponseSchema,
  changePasswordBodySchema,
  createApiKeyBodySchema,
  errorEnvelopeSchema,
  loginBodySchema,
  meResponseSchema,
  nullDataSchema,
  registerBodySchema,
} from '@deeplink/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AuthService } from '../domain/auth-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { addressSubject } from '../plugins/rate-limit.js';
import { authenticatedErrors } from './responses.js';

const tags = ['Account'];

/** SPEC §4 Account: register and login are public (and strictly rate limited per address). */
export const publicAuthRoutes: FastifyPluginAsyncZod<{ auth: AuthService }> = async (app, { auth }) => {
  app.post(
    '/auth/register',
    {
      config: { rateLimitScope: 'auth' },
      schema: {
        operationId: 'register',
        tags,
        summary: 'Create an account',
        security: [],
        body: registerBodySchema,
        response: {
          201: authResponseSchema,
          400: errorEnvelopeSchema,
          409: errorEnvelopeSchema.describe('Email already registered'),
          429: errorEnvelopeSchema,
        },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true, data: await auth.register(request.body) }),
  );

  app.post(
    '/auth/login',
    {
      config: { rateLimitScope: 'auth' },
      schema: {
        operationId: 'login',
        tags,
        summary: 'Log in and get a 24-hour token',
        security: [],
        body: loginBodySchema,
        response: { 200: authResponseSchema, 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 429: errorEnvelopeSchema },
      },
    },
    async (request) => ({ success: true, data: await auth.login(request.body) }) as const,
  );
};

/** SPEC §4 Account: the caller and their API keys. */
export const accountRoutes: FastifyPluginAsyncZod<{ auth: AuthService }> = async (app, { auth }) => {
  app.addHook('onRequest', requirePrincipal);

  app.get(
    '/auth/me',
    {
      schema: {
        operationId: 'getCurrentUser',
        tags,
        summary: 'The authenticated user',
        response: { 200: meResponseSchema, 400: authenticatedErrors[400], 401: authenticatedErrors[401], 429: authenticatedErrors[429] },
      },
    },
    async (request) => ({ success: true, data: { user: await auth.me(principalOf(request)) } }) as const,
  );

  app.post(
    '/auth/logout-all',
    {
      schema: {
        operationId: 'logoutAll',
        tags,
        summary: 'End every login token of the account (API keys stay valid); needs a login token',
        response: { 200: nullDataSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      await auth.revokeTokens(principalOf(request));
      return { success: true, data: null } as const;
    },
  );

  app.post(
    '/auth/password',
    {
      schema: {
        operationId: 'changePassword',
        tags,
        summary: 'Change the password: every earlier login token ends; the answer carries a new one',
        body: changePasswordBodySchema,
        response: { 200: authResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) =>
      ({ success: true, data: await auth.changePassword(principalOf(request), request.body, addressSubject(request)) }) as const,
  );

  app.post(
    '/auth/api-keys',
    {
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key (needs a login token; the key is shown only in this response)',
        body: createApiKeyBodySchema,
        response: { 201: apiKeyResponseSchema, ...authenticatedErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { apiKey: await auth.createApiKey(principalOf(request), request.body.name) } }),
  );

  app.get(
    '/auth/api-keys',
    {
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: "The caller's API keys, newest first: name, prefix, creation and last use, never the secret",
        response: { 200: apiKeyListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { apiKeys: await auth.listApiKeys(principalOf(request)) } }) as const,
  );

  app.delete(
    '/auth/api-keys/:id',
    {
      schema: {
        operationId: 'deleteApiKey',
        tags,
        summary: 'Revoke an API key (effective immediately)',
        params: apiKeyIdParamsSchema,
        response: { 200: nullDataSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      await auth.deleteApiKey(principalOf(request), request.params.id);
      return { success: true, data: null } as const;
    },
  );
};
