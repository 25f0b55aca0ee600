import {
  appListResponseSchema,
  appResponseSchema,
  appWithKeyResponseSchema,
  createAppBodySchema,
  createDomainBodySchema,
  domainListResponseSchema,
  domainResponseSchema,
  idParamsSchema,
  nullDataSchema,
  updateAppBodySchema,
  updateDomainBodySchema,
} from '@deeplink/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppsService } from '../domain/apps-service.js';
import type { DomainsService } from '../domain/domains-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const conflict = (description: string) => ({ 409: authenticatedErrors[400].describe(description) });

/** The caller's apps (association files, App Store fallback) and custom short-link domains. */
export const appDomainRoutes: FastifyPluginAsyncZod<{ apps: AppsService; domains: DomainsService }> = async (app, { apps, domains }) => {
  app.addHook('onRequest', requirePrincipal);

  app.post(
    '/apps',
    {
      schema: {
        operationId: 'createApp',
        tags: ['Apps'],
        summary: 'Register an iOS or Android app (served in the association files of your domains); its app key is shown this once',
        body: createAppBodySchema,
        response: { 201: appWithKeyResponseSchema, ...authenticatedErrors, ...conflict('App already registered') },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { app: await apps.create(principalOf(request), request.body) } }),
  );

  app.get(
    '/apps',
    {
      schema: {
        operationId: 'listApps',
        tags: ['Apps'],
        summary: "The caller's apps",
        response: { 200: appListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { apps: await apps.list(principalOf(request)) } }) as const,
  );

  app.post(
    '/apps/:id/key',
    {
      schema: {
        operationId: 'rotateAppKey',
        tags: ['Apps'],
        summary: "Replace the app's key (or give one to an app without): the new key is shown this once, the old one stops at once",
        params: idParamsSchema,
        response: { 200: appWithKeyResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { app: await apps.rotateKey(principalOf(request), request.params.id) } }) as const,
  );

  app.patch(
    '/apps/:id',
    {
      schema: {
        operationId: 'updateApp',
        tags: ['Apps'],
        summary: "Change the app's settings: the probabilistic install match (fingerprintMatching, fingerprintWindowMinutes)",
        params: idParamsSchema,
        body: updateAppBodySchema,
        response: { 200: appResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) =>
      ({ success: true, data: { app: await apps.update(principalOf(request), request.params.id, request.body) } }) as const,
  );

  app.delete(
    '/apps/:id',
    {
      schema: {
        operationId: 'deleteApp',
        tags: ['Apps'],
        summary: 'Remove an app',
        params: idParamsSchema,
        response: { 200: nullDataSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      await apps.delete(principalOf(request), request.params.id);
      return { success: true, data: null } as const;
    },
  );

  app.post(
    '/domains',
    {
      schema: {
        operationId: 'createDomain',
        tags: ['Domains'],
        summary: 'Add a custom domain: pending until its TXT record holds the verification token',
        body: createDomainBodySchema,
        response: { 201: domainResponseSchema, ...authenticatedErrors, ...conflict('Domain already added') },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { domain: await domains.create(principalOf(request), request.body) } }),
  );

  app.get(
    '/domains',
    {
      schema: {
        operationId: 'listDomains',
        tags: ['Domains'],
        summary: "The caller's domains",
        response: { 200: domainListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { domains: await domains.list(principalOf(request)) } }) as const,
  );

  app.get(
    '/domains/:id',
    {
      schema: {
        operationId: 'getDomain',
        tags: ['Domains'],
        summary: 'Get a domain',
        params: idParamsSchema,
        response: { 200: domainResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { domain: await domains.get(principalOf(request), request.params.id) } }) as const,
  );

  app.post(
    '/domains/:id/verify',
    {
      schema: {
        operationId: 'verifyDomain',
        tags: ['Domains'],
        summary: 'Look the TXT record up now: active when it holds the token, else still pending',
        params: idParamsSchema,
        response: { 200: domainResponseSchema, ...authenticatedErrors, ...conflict('Active on another account') },
      },
    },
    async (request) => ({ success: true, data: { domain: await domains.verify(principalOf(request), request.params.id) } }) as const,
  );

  app.put(
    '/domains/:id',
    {
      schema: {
        operationId: 'updateDomain',
        tags: ['Domains'],
        summary: "Change the domain's not-found URL or allowed URL patterns (the fields sent; the others stay)",
        params: idParamsSchema,
        body: updateDomainBodySchema,
        response: { 200: domainResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) =>
      ({ success: true, data: { domain: await domains.update(principalOf(request), request.params.id, request.body) } }) as const,
  );

  app.delete(
    '/domains/:id',
    {
      schema: {
        operationId: 'deleteDomain',
        tags: ['Domains'],
        summary: 'Remove a domain without links',
        params: idParamsSchema,
        response: { 200: nullDataSchema, ...authenticatedErrors, ...conflict('The domain has links') },
      },
    },
    async (request) => {
      await domains.delete(principalOf(request), request.params.id);
      return { success: true, data: null } as const;
    },
  );
};
