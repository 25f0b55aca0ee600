import { errorEnvelopeSchema, idParamsSchema, LIVE_RECENT_CLICKS } from '@deeplink/core';
import type { LinksRepository } from '@deeplink/core/db';
import { LIVE_ENTRY_ID } from '@deeplink/core/redis';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LIVE_RATE_WINDOW_MS, type LiveFeed } from '../domain/live-feed.js';
import { findOwnedLink } from '../domain/owned-link.js';
import { principalOf, requirePrincipal } from '../plugins/authentication.js';
import { authenticatedErrors } from './responses.js';

const tags = ['Analytics'];

// Other headers pass untouched: only Last-Event-ID is read here.
const resumeHeaders = z.looseObject({
  'last-event-id': z.string().regex(LIVE_ENTRY_ID, 'must be the id of a message of this stream').optional().meta({
    description:
      'The id of the last message received: the stream first sends the stored messages after it (the last few hundred), then live ones',
    example: '1764072001400-0',
  }),
});

const EXAMPLE =
  'id: 1764072001400-0\nevent: clicks\n' +
  'data: {"at":"2026-11-25T12:00:01.400Z","clicks":2,"perSecond":0.2,"recent":[{"at":"2026-11-25T12:00:01.250Z","linkId":"6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10","platform":"ios","country":"DE","browser":"Mobile Safari","os":"iOS","referrer":"t.co"}]}\n\n' +
  ': ping\n\n';

// The stream is written as it goes, so this schema only documents it.
const eventStream = (scope: string) =>
  z.any().meta({
    description:
      `Server-Sent Events: the clicks ${scope} as the worker commits them. Each message is \`id: <id>\`, \`event: clicks\` and ` +
      '`data:` one JSON object (the LiveClicks schema): `clicks` of this stream in that commit, `perSecond` over the last ' +
      `${LIVE_RATE_WINDOW_MS / 1000} s and the \`recent\` clicks, newest first, at most ${LIVE_RECENT_CLICKS}. A \`: ping\` comment ` +
      'comes every 15 s (LIVE_PING_INTERVAL_MS). Reconnect with Last-Event-ID to get the messages missed. A client that ' +
      'stops reading is disconnected. Read it with fetch and a stream reader (EventSource cannot send Authorization).',
    headers: {
      'Cache-Control': { description: 'Never stored by caches or proxies', type: 'string', const: 'no-store' },
    },
    content: {
      'text/event-stream': {
        schema: { type: 'string', pattern: '^(:|id: |event: |data: |\\n)', contentSchema: { $ref: '#/components/schemas/LiveClicks' } },
        example: EXAMPLE,
      },
    },
  });

const liveErrors = {
  ...authenticatedErrors,
  429: errorEnvelopeSchema.describe('Rate limit exceeded, or 5 live streams already open for the account; see Retry-After'),
  503: errorEnvelopeSchema.describe('Live streams cannot be served right now (Redis unreachable)'),
} as const;

/** The live click streams (Server-Sent Events): the account's, and one link's. */
export const liveRoutes: FastifyPluginAsyncZod<{ live: LiveFeed; links: LinksRepository }> = async (app, { live, links }) => {
  app.addHook('onRequest', requirePrincipal);

  app.get(
    '/analytics/live',
    {
      schema: {
        operationId: 'streamAccountClicks',
        tags,
        headers: resumeHeaders,
        response: { 200: eventStream('of every link of the caller'), ...liveErrors },
        summary: "The caller's clicks as they are recorded, as Server-Sent Events",
      },
    },
    async (request, reply) => live.open({ userId: principalOf(request).userId }, reply, request.headers['last-event-id']),
  );

  app.get(
    '/analytics/links/:id/live',
    {
      schema: {
        operationId: 'streamLinkClicks',
        tags,
        params: idParamsSchema,
        headers: resumeHeaders,
        response: { 200: eventStream('of this link'), ...liveErrors },
        summary: "A link's clicks as they are recorded, as Server-Sent Events",
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const link = await findOwnedLink(links, principal, request.params.id);
      return live.open({ userId: principal.userId, linkId: link.id }, reply, request.headers['last-event-id']);
    },
  );
};
