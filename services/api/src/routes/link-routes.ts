import {
  bulkCreateBodySchema,
  bulkCreateResponseSchema,
  bulkDeleteBodySchema,
  bulkDeleteResponseSchema,
  createLinkBodySchema,
  idParamsSchema,
  linkListResponseSchema,
  linkResponseSchema,
  listLinksQuerySchema,
  nullDataSchema,
  slugAvailabilityQuerySchema,
  slugAvailabilityResponseSchema,
  tagListResponseSchema,
  updateLinkBodySchema,
} from '@deeplink/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LinksService } from '../domain/links-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const tags = ['Links'];

/** SPEC §4 Links. */
export const linkRoutes: FastifyPluginAsyncZod<{ links: LinksService }> = async (app, { links }) => {
  app.addHook('onRequest', requirePrincipal);

  app.post(
    '/links',
    {
      schema: {
        operationId: 'createLink',
        tags,
        summary: 'Create a link (optional custom slug)',
        body: createLinkBodySchema,
        response: { 201: linkResponseSchema, ...authenticatedErrors, 409: authenticatedErrors[400].describe('Slug already taken') },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { link: await links.create(principalOf(request), request.body) } }),
  );

  app.get(
    '/links',
    {
      schema: {
        operationId: 'listLinks',
        tags,
        summary: "List the caller's links, a page at a time",
        querystring: listLinksQuerySchema,
        response: { 200: linkListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: await links.list(principalOf(request), request.query) }) as const,
  );

  app.get(
    '/tags',
    {
      schema: {
        operationId: 'listTags',
        tags,
        summary: "Every tag on the caller's links, with how many links carry it",
        response: { 200: tagListResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { tags: await links.tags(principalOf(request)) } }) as const,
  );

  app.post(
    '/links/bulk',
    {
      // One unit of the rate limit per link, as if each had been created on its own.
      config: { rateLimitUnits: (request) => (request.body as { links: unknown[] }).links.length },
      schema: {
        operationId: 'createLinks',
        tags,
        body: bulkCreateBodySchema,
        response: {
          201: bulkCreateResponseSchema,
          ...authenticatedErrors,
          409: authenticatedErrors[400].describe('A slug is already taken; nothing was created'),
        },
        summary: 'Create up to 100 links in one transaction: all of them, or none (400/409 naming links.N.field)',
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { links: await links.createMany(principalOf(request), request.body.links) } }),
  );

  app.post(
    '/links/bulk-delete',
    {
      // One unit of the rate limit per link named, as if each had been deleted on its own.
      config: { rateLimitUnits: (request) => (request.body as { ids: string[] }).ids.length },
      schema: {
        operationId: 'deleteLinks',
        tags,
        body: bulkDeleteBodySchema,
        response: { 200: bulkDeleteResponseSchema, ...authenticatedErrors },
        summary: "Delete up to 100 of the caller's links in one transaction; if any is another account's: 403 and nothing deleted",
      },
    },
    async (request) => ({ success: true, data: { deleted: await links.deleteMany(principalOf(request), request.body.ids) } }) as const,
  );

  app.get(
    '/links/slug-availability',
    {
      schema: {
        operationId: 'getSlugAvailability',
        tags,
        summary: 'Whether a back-half (slug) is free on the default domain or one of your domains, for forms that check as you type',
        querystring: slugAvailabilityQuerySchema,
        response: { 200: slugAvailabilityResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { slug, domain } = request.query;
      const { available, url } = await links.slugAvailability(principalOf(request), slug, domain);
      return { success: true, data: { slug, ...(domain !== undefined && { domain }), available, url } } as const;
    },
  );

  app.get(
    '/links/:id',
    {
      schema: {
        operationId: 'getLink',
        tags,
        summary: 'Get a link',
        params: idParamsSchema,
        response: { 200: linkResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { link: await links.get(principalOf(request), request.params.id) } }) as const,
  );

  app.put(
    '/links/:id',
    {
      schema: {
        operationId: 'updateLink',
        tags,
        params: idParamsSchema,
        body: updateLinkBodySchema,
        response: { 200: linkResponseSchema, ...authenticatedErrors },
        summary: 'Update a link: a JSON Merge Patch (omitted fields keep their values, nested objects merge, null clears)',
      },
    },
    async (request) =>
      ({ success: true, data: { link: await links.update(principalOf(request), request.params.id, request.body) } }) as const,
  );

  app.delete(
    '/links/:id',
    {
      schema: {
        operationId: 'deleteLink',
        tags,
        summary: 'Delete a link and its analytics',
        params: idParamsSchema,
        response: { 200: nullDataSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      await links.delete(principalOf(request), request.params.id);
      return { success: true, data: null } as const;
    },
  );
};
