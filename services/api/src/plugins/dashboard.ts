import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { sendNotFound } from './error-handler.js';
import { setPageHeaders } from './page-headers.js';

/** Vite names every file under assets/ after its content: a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Serves the dashboard's static build (services/dashboard/dist) at the origin root, beside /api:
 * hashed assets cached for a year, index.html revalidated on every load so a deploy shows at once.
 * Paths that are not files (`/links/abc`) get index.html, where the dashboard's router takes over;
 * unknown /api paths and missing files still get the API's 404 envelope. Without a build the root says
 * how to make one, and the API runs as usual.
 */
export async function dashboard(dashboard: FastifyInstance, { root }: { root: string | undefined }): Promise<void> {
  const index = root && join(root, 'index.html');
  // Pages and assets are outside the API's rate limits and never read credentials.
  dashboard.addHook('onRoute', (route) => {
    route.config = { ...route.config, rateLimitScope: 'none' };
  });
  if (!root || !index || !existsSync(index)) {
    dashboard.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(
          'The dashboard is not built. Run `npm run build` (or `npm start`, which builds it) and restart the API; the API itself is at /api.\n',
        ),
    );
    return;
  }
  dashboard.addHook('onSend', setPageHeaders);
  await dashboard.register(fastifyStatic, {
    root,
    // Routes below: files are looked up per request, so a rebuild while the API runs is served at once.
    serve: false,
    cacheControl: false,
    setHeaders: (response, path) => {
      response.setHeader('cache-control', path.includes(`${sep}assets${sep}`) ? IMMUTABLE : 'no-cache');
    },
  });
  dashboard.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    schema: { hide: true },
    handler: (request, reply) => {
      const path = decodedPath(request.url);
      // An unknown API path stays the API's 404, never a page.
      if (path === undefined || path === '/api' || path.startsWith('/api/')) return sendNotFound(request, reply);
      // A name with an extension is a file (a missing one is a 404); anything else is a page of the dashboard's router.
      return reply.sendFile(/\.[A-Za-z0-9]+$/.test(path) ? path : 'index.html');
    },
  });
}

/** The URL's path, percent-decoded; undefined when it does not decode. */
function decodedPath(url: string): string | undefined {
  try {
    return decodeURIComponent(url.split('?')[0]!);
  } catch {
    return undefined;
  }
}
