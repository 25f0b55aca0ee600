import type { Readable } from 'node:stream';
import {
  createImportBodySchema,
  errorEnvelopeSchema,
  idParamsSchema,
  importResponseSchema,
  importRowsResponseSchema,
  listImportRowsQuerySchema,
  MAX_IMPORT_BYTES,
} from '@deeplink/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LinkImportService } from '../domain/link-import-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const tags = ['Imports'];

/** The CSV file of PUT /imports/:id/file, read as a stream by the importer rather than parsed by Fastify. */
const csvFileSchema = z.any().meta({
  description: `The CSV file, at most ${MAX_IMPORT_BYTES} bytes, its first row the header`,
  content: { 'text/csv': { schema: { type: 'string' } } },
});

/** Link imports (docs/import.md): create one, send its file, follow its progress, read its report. */
export const importRoutes: FastifyPluginAsyncZod<{ imports: LinkImportService }> = async (app, { imports }) => {
  app.addHook('onRequest', requirePrincipal);
  // Only here does the API take a body that is not JSON: the file goes to the importer as it arrives.
  app.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));

  app.post(
    '/imports',
    {
      schema: {
        operationId: 'createImport',
        tags,
        summary: 'Create an import of links from a CSV file: its format, domain and options; then send the file',
        body: createImportBodySchema,
        response: { 201: importResponseSchema, ...authenticatedErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ success: true, data: { import: await imports.create(principalOf(request), request.body) } }),
  );

  app.put(
    '/imports/:id/file',
    {
      schema: {
        operationId: 'runImport',
        tags,
        summary: "Send an import's CSV file (text/csv); answers the finished import. GET /imports/{id} meanwhile shows its progress",
        params: idParamsSchema,
        body: csvFileSchema,
        response: {
          200: importResponseSchema,
          ...authenticatedErrors,
          409: errorEnvelopeSchema.describe('The import already read a file, or another import of the account runs'),
          413: errorEnvelopeSchema.describe(`The file is larger than ${MAX_IMPORT_BYTES} bytes`),
        },
      },
    },
    async (request, reply) => {
      const length = Number(request.headers['content-length']);
      const file = request.body as Readable;
      try {
        const done = await imports.run(principalOf(request), request.params.id, file, Number.isFinite(length) ? length : undefined);
        return { success: true, data: { import: done } } as const;
      } catch (error) {
        // The rest of an upload refused part-way is not read: the connection closes after the answer.
        if (!request.raw.complete) reply.header('connection', 'close');
        throw error;
      }
    },
  );

  app.get(
    '/imports/:id',
    {
      schema: {
        operationId: 'getImport',
        tags,
        summary: 'An import: its status, bytes read of the file, rows done, and the count of each outcome',
        params: idParamsSchema,
        response: { 200: importResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: { import: await imports.get(principalOf(request), request.params.id) } }) as const,
  );

  app.get(
    '/imports/:id/rows',
    {
      schema: {
        operationId: 'listImportRows',
        tags,
        summary: "An import's report, a page at a time by line: what became of each row, with the reasons a row was refused",
        params: idParamsSchema,
        querystring: listImportRowsQuerySchema,
        response: { 200: importRowsResponseSchema, ...authenticatedErrors },
      },
    },
    async (request) => ({ success: true, data: await imports.rows(principalOf(request), request.params.id, request.query) }) as const,
  );
};
