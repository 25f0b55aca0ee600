import {
  DIMENSION_NAMES,
  DIMENSIONS,
  APP_EVENT_NAMES,
  TOP_DIMENSION_NAMES,
  WIDE_APP_EVENT_COLUMNS,
  WIDE_FIXED_COLUMNS,
  accountExportQuerySchema,
  analyticsExportQuerySchema,
  idParamsSchema,
  linkAnalyticsQuerySchema,
  linkAnalyticsResponseSchema,
  summaryAnalyticsQuerySchema,
  summaryAnalyticsResponseSchema,
} from '@deeplink/core';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ACCOUNT_LONG_COLUMNS, EXPORT_COLUMNS } from '../domain/analytics-export.js';
import type { AnalyticsExport, AnalyticsService } from '../domain/analytics-service.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const tags = ['Analytics'];

const rowsOf = (...rows: string[]) => ({ anyOf: rows.map((row) => ({ type: 'array', items: { $ref: `#/components/schemas/${row}` } })) });
/** A CSV body, told apart by its header row. */
const csvWithHeader = (...headers: string[]) => ({ anyOf: headers.map((header) => ({ type: 'string', pattern: `^${header}\r\n` })) });
const LONG_EXAMPLE = '2026-03-01T00:00:00.000Z,total,all,3';
const topPrefixes = TOP_DIMENSION_NAMES.map((name) => DIMENSIONS[name].values.widePrefix);
// A column named after a value (a referrer host may hold a comma or a quote) is quoted when the value needs it.
const WIDE_HEADER = `${[...WIDE_FIXED_COLUMNS, ...WIDE_APP_EVENT_COLUMNS.map(({ column }) => column)].join(',')}(,((${topPrefixes.join('|')})[^,";\r\n]*|"(${topPrefixes.join('|')})([^"]|"")*"))*`;
const wideGroups = TOP_DIMENSION_NAMES.map((name) => `${DIMENSIONS[name].values.widePrefix}<value>`).join(', ');
const wideRests = TOP_DIMENSION_NAMES.map((name) => `${DIMENSIONS[name].values.widePrefix}${DIMENSIONS[name].values.rest}`).join(', ');

// The export is streamed, so this schema only documents it: the body, per media type and layout, and the download header.
const exportFileSchema = (scope: string, long: { row: string; columns: readonly string[]; example: string }) =>
  z.any().meta({
    description:
      `A file download, not wrapped in the envelope, ${scope}. ` +
      'layout=long (default): one row per bucket and dimension value, ordered by bucket; each bucket starts with its `total` row ' +
      `(value \`all\`, zero-filled). Dimensions: ${['total', ...DIMENSION_NAMES].join(', ')}; no top-10 folding. ` +
      `Then the bucket's app events: the event (${APP_EVENT_NAMES.join(', ')}) as the dimension, its platform as the value, ` +
      'its count in clicks, for those that happened. ' +
      `layout=wide: one row per link and bucket (zero-filled), columns ${WIDE_FIXED_COLUMNS.join(', ')}, ` +
      `then each app event per platform (${WIDE_APP_EVENT_COLUMNS.map(({ column }) => column).join(', ')}), then ${wideGroups} for the top 10 of the whole export and ${wideRests} for the rest. ` +
      'CSV: RFC 4180, CRLF line ends, a header row naming the columns; JSON: an array of objects keyed by the same names.',
    headers: {
      'Content-Disposition': {
        description: 'attachment, with the file name (analytics-<link or tag>-<range>[-<layout>].<format>)',
        type: 'string',
        pattern: '^attachment; filename="[^"]+"',
      },
    },
    content: {
      'text/csv': {
        schema: csvWithHeader(long.columns.join(','), WIDE_HEADER),
        example: `${long.columns.join(',')}\r\n${long.example}\r\n`,
      },
      'application/json': { schema: rowsOf(long.row, 'AnalyticsWideExportRow') },
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

  app.get(
    '/analytics/links/:id',
    {
      schema: {
        operationId: 'getLinkAnalytics',
        tags,
        params: idParamsSchema,
        querystring: linkAnalyticsQuerySchema,
        response: { 200: linkAnalyticsResponseSchema, ...authenticatedErrors },
        summary: "A link's clicks over a range: totals, unique visitors, breakdowns and a zero-filled time series",
      },
      // The schema documents the answer; checking a year by hour (8,760 buckets) against it on every
      // call cost more than reading the rollups, and the report is built by typed code.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (request) =>
      ({ success: true, data: { analytics: await analytics.linkReport(principalOf(request), request.params.id, request.query) } }) as const,
  );

  app.get(
    '/analytics/summary',
    {
      schema: {
        operationId: 'getAnalyticsSummary',
        tags,
        querystring: summaryAnalyticsQuerySchema,
        response: { 200: summaryAnalyticsResponseSchema, ...authenticatedErrors },
        summary: "The caller's links and clicks, all time unless a range is given; optionally only one tag's links",
      },
    },
    async (request) => ({ success: true, data: { summary: await analytics.summary(principalOf(request), request.query) } }) as const,
  );

  app.get(
    '/analytics/links/:id/export',
    {
      schema: {
        operationId: 'exportLinkAnalytics',
        tags,
        params: idParamsSchema,
        querystring: analyticsExportQuerySchema,
        response: {
          200: exportFileSchema('of one link', { row: 'AnalyticsExportRow', columns: EXPORT_COLUMNS, example: LONG_EXAMPLE }),
          ...authenticatedErrors,
        },
        summary: "Download a link's counts per bucket (and dimension value, or as columns) as CSV or a JSON array (streamed)",
      },
    },
    async (request, reply) => sendFile(reply, await analytics.export(principalOf(request), request.params.id, request.query)),
  );

  app.get(
    '/analytics/export',
    {
      schema: {
        operationId: 'exportAccountAnalytics',
        tags,
        querystring: accountExportQuerySchema,
        response: {
          200: exportFileSchema('of every link of the caller (or of one tag), link by link; long rows lead with link_id', {
            row: 'AnalyticsAccountExportRow',
            columns: ACCOUNT_LONG_COLUMNS,
            example: `6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10,${LONG_EXAMPLE}`,
          }),
          ...authenticatedErrors,
        },
        summary: "Download the counts of all the caller's links (or one tag's) per bucket as CSV or a JSON array, long or wide (streamed)",
      },
    },
    async (request, reply) => sendFile(reply, await analytics.accountExport(principalOf(request), request.query)),
  );
};
