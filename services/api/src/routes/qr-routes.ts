import { idParamsSchema, linkQrQuerySchema, linkQrRenderSchema, type LinkQrQuery } from '@deeplink/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LinksService } from '../domain/links-service.js';
import type { ConcurrencyLimit } from '../domain/concurrency-limit.js';
import { type LogoField, renderQrCode } from '../domain/qr-code.js';
import type { QrLogoSource } from '../domain/qr-logo-source.js';
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
export const qrRoutes: FastifyPluginAsyncZod<{
  links: LinksService;
  renders: QrRenderPool;
  pngLimit: ConcurrencyLimit;
  logos: QrLogoSource;
}> = async (app, { links, renders, pngLimit, logos }) => {
  app.addHook('onRequest', requirePrincipal);

  /**
   * The image of the caller's link `id` with `style` (and a logo: its bytes, or where to fetch
   * them), as a download-ready answer.
   */
  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    style: LinkQrQuery,
    logoFrom?: { bytes: Buffer } | { url: string },
  ) {
    // The same ownership check as GET /links/:id: 404 for no such link, 403 for another account's.
    const principal = principalOf(request);
    const link = await links.get(principal, id);
    const logo = logoFrom && ('url' in logoFrom ? await logos.get(principal.userId, logoFrom.url) : logoFrom.bytes);
    const logoField: LogoField = logoFrom && 'url' in logoFrom ? 'logoUrl' : 'logo';
    // One account's PNGs cannot take every render thread: the rest of its requests wait their turn.
    const release = style.format === 'png' ? pngLimit.acquire(principal.userId) : undefined;
    const image = await renderQrCode(link.url, style, renders, logo, logoField).finally(release);
    const code = new URL(link.url).pathname.slice(1) || link.id;
    return (
      reply
        .type(image.contentType)
        // Private: the image names a link of this account. no-cache: a changed short URL base shows at once.
        .header('cache-control', 'private, no-cache')
        .header('content-disposition', `inline; filename="qr-${code.replace(/[^A-Za-z0-9_-]/g, '')}.${style.format}"`)
        .send(image.body)
    );
  }

  app.get(
    '/links/:id/qr',
    {
      schema: {
        operationId: 'getLinkQrCode',
        tags: ['Links'],
        summary: "The link's short URL as a QR code (SVG or PNG), in the given colours",
        params: idParamsSchema,
        querystring: linkQrQuerySchema,
        response: { 200: qrImageSchema, ...authenticatedErrors },
      },
    },
    async (request, reply) => answer(request, reply, request.params.id, request.query),
  );

  app.post(
    '/links/:id/qr',
    {
      schema: {
        operationId: 'renderLinkQrCode',
        tags: ['Links'],
        summary: "The link's short URL as a QR code with a logo in its centre: the same options as the GET, in a JSON body",
        params: idParamsSchema,
        body: linkQrRenderSchema,
        response: { 200: qrImageSchema, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { logo, logoUrl, ...style } = request.body;
      const logoFrom = logo !== undefined ? { bytes: Buffer.from(logo, 'base64') } : logoUrl !== undefined ? { url: logoUrl } : undefined;
      return answer(request, reply, request.params.id, style, logoFrom);
    },
  );
};
