import { accountExportQuerySchema, analyticsExportQuerySchema, idParamsSchema, linkAnalyticsQuerySchema, linkAnalyticsResponseSchema, summaryAnalyticsQuerySchema, summaryAnalyticsResponseSchema } from '@deeplink/core';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AnalyticsExport, AnalyticsService } from '../domain/analytics-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const tags = ['Analytics'];

// The export is streamed, so this schema only documents it; the two formats are spelled out per media type.
const exportFileSchema = (scope: string) => z.any().meta({
  description:
    `A file download (Content-Disposition: attachment), not wrapped in the envelope, ${scope}. ` +
    'layout=long (default): one row per bucket and dimension value, ordered by bucket; each bucket starts with its `total` row ' +
    '(value `all`, zero-filled). Dimensions: total, platform, country, browser, os, device, referrer; no top-10 folding. ' +
    'layout=wide: one row per link and bucket (zero-filled), columns link_id, title, short_url, bucket_start, clicks, unique_clicks, ' +
    'android, ios, desktop, mobile, desktop_device, then country_<code> and browser_<name> for the top 10 of the whole export and ' +
    'country_Other, browser_Other for the rest.',
  content: {
    'text/csv': {
      schema: { type: 'string' },
      example: 'bucket,dimension,value,clicks\r\n2026-03-01T00:00:00.000Z,total,all,3\r\n2026-03-01T00:00:00.000Z,browser,Chrome,2\r\n',
    },
    'application/json': {
      schema: { type: 'array', items: { $ref: '#/components/schemas/AnalyticsExportRow' } },
    },
  },
});

/** A filename as RFC 6266 wants it: an ASCII fallback, plus the exact UTF-8 name when they differ. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^A-Za-z0-9._-]+/g, '_');
  // RFC 5987 allows fewer bare characters than encodeURIComponent leaves: ' ( ) * are encoded too.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return ascii === filename ? `attachment; filename="${ascii}"` : `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const sendFile = (reply: FastifyReply, file: AnalyticsExport) =>
  reply.type(file.contentType).header('content-disposition', contentDisposition(file.filename)).send(file.body);

/** SPEC §4 Analytics, plus the export. */
export const analyticsRoutes: FastifyPluginAsyncZod<{ analytics: AnalyticsService }> = async (app, { analytics }) => {
  app.addHook('onRequest', requirePrincipal);

  app.get('/analytics/links/:id', {
    schema: {
      tags, params: idParamsSchema, querystring: linkAnalyticsQuerySchema, response: { 200: linkAnalyticsResponseSchema, ...authenticatedErrors },
      summary: "A link's clicks over a range: totals, unique visitors, breakdowns and a zero-filled time series",
    },
    // The schema documents the answer; checking a year by hour (8,760 buckets) against it on every
    // call cost more than reading the rollups, and the report is built by typed code.
    serializerCompiler: () => (data) => JSON.stringify(data),
  }, async (request) =>
    ({ success: true, data: { analytics: await analytics.linkReport(principalOf(request), request.params.id, request.query) } }) as const);

  app.get('/analytics/summary', {
    schema: {
      tags, querystring: summaryAnalyticsQuerySchema, response: { 200: summaryAnalyticsResponseSchema, ...authenticatedErrors },
      summary: "The caller's links and clicks, all time unless a range is given; optionally only one tag's links",
    },
  }, async (request) => ({ success: true, data: { summary: await analytics.summary(principalOf(request), request.query) } }) as const);

  app.get('/analytics/links/:id/export', {
    schema: {
      tags, params: idParamsSchema, querystring: analyticsExportQuerySchema,
      response: { 200: exportFileSchema('of one link'), ...authenticatedErrors },
      summary: "Download a link's counts per bucket (and dimension value, or as columns) as CSV or a JSON array (streamed)",
    },
  }, async (request, reply) => sendFile(reply, await analytics.export(principalOf(request), request.params.id, request.query)));

  app.get('/analytics/export', {
    schema: {
      tags, querystring: accountExportQuerySchema,
      response: { 200: exportFileSchema("of every link of the caller (or of one tag), link by link; long rows lead with link_id"), ...authenticatedErrors },
      summary: "Download the counts of all the caller's links (or one tag's) per bucket as CSV or a JSON array, long or wide (streamed)",
    },
  }, async (request, reply) => sendFile(reply, await analytics.accountExport(principalOf(request), request.query)));
};
