import { idParamsSchema, linkQrQuerySchema } from '@deeplink/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LinksService } from '../domain/links-service.js';
import type { ConcurrencyLimit } from '../domain/concurrency-limit.js';
import { renderQrCode } from '../domain/qr-code.js';
import type { QrRenderPool } from '../domain/qr-render-pool.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const qrImageSchema = z.any().meta({
  description: "The QR code of the link's short URL: an SVG document or a PNG image, not wrapped in the envelope",
  headers: {
    'Content-Disposition': {
      description: 'inline, with a file name: qr-<code>.<format>',
      type: 'string',
      pattern: '^inline; filename="qr-[A-Za-z0-9_-]*\\.(svg|png)"$',
    },
    'Cache-Control': {
      description: 'private, no-cache: the image names a link of this account, and a changed short URL base shows at once',
      type: 'string',
    },
  },
  content: { 'image/svg+xml': { schema: { type: 'string' } }, 'image/png': { schema: { type: 'string', format: 'binary' } } },
});

/** A link's short URL as a QR code, for print and for screens. */
export const qrRoutes: FastifyPluginAsyncZod<{ links: LinksService; renders: QrRenderPool; pngLimit: ConcurrencyLimit }> = async (
  app,
  { links, renders, pngLimit },
) => {
  app.addHook('onRequest', requirePrincipal);

  app.get(
    '/links/:id/qr',
    {
      schema: {
        operationId: 'getLinkQrCode',
        tags: ['Links'],
        summary: "The link's short URL as a QR code (SVG or PNG)",
        params: idParamsSchema,
        querystring: linkQrQuerySchema,
        response: { 200: qrImageSchema, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      // The same ownership check as GET /links/:id: 404 for no such link, 403 for another account's.
      const principal = principalOf(request);
      const link = await links.get(principal, request.params.id);
      // One account's PNGs cannot take every render thread: the rest of its requests wait their turn.
      const release = request.query.format === 'png' ? pngLimit.acquire(principal.userId) : undefined;
      const image = await renderQrCode(link.url, request.query, renders).finally(release);
      const code = new URL(link.url).pathname.slice(1) || link.id;
      return (
        reply
          .type(image.contentType)
          // Private: the image names a link of this account. no-cache: a changed short URL base shows at once.
          .header('cache-control', 'private, no-cache')
          .header('content-disposition', `inline; filename="qr-${code.replace(/[^A-Za-z0-9_-]/g, '')}.${request.query.format}"`)
          .send(image.body)
      );
    },
  );
};
