import { clientAddressResolver, type Config, redisKeys } from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';
import { dependencyReadiness, type Logger, rateLimitedLog, readinessStatus } from '@deeplink/core/runtime';
import type { HttpRequest, HttpResponse, us_listen_socket } from 'uws-bundled';
import { createClickBuffer } from './click-buffer.js';
import { createClickCaps } from './click-caps.js';
import { createClickSpool } from './click-spool.js';
import { createDebugPages } from './debug-pages.js';
import { createMissLimiter } from './miss-limiter.js';
import { createLinkLookup } from './link-lookup.js';
import { createLinkPasswords } from './link-passwords.js';
import { createLongLinks } from './long-links.js';
import { createDomainLookup, domainAnswers } from './domain-lookup.js';
import { createHostnames } from './hostnames.js';
import { Metrics } from './metrics.js';
import { createRequestPath } from './request-path.js';
import { deadEndAnswers, METHOD_NOT_ALLOWED, page, Responder, TYPE } from './responses.js';
import { connectionDropper, uws, uwsImplementation } from './uws.js';
import { wire } from './wire.js';

/** At shutdown: how long in-flight lookups get to answer, and how long the last click flush may take. */
const DRAIN_MS = 1_000;
const CLICK_FLUSH_TIMEOUT_MS = 10_000;

/** Answers outside the request path (not counted in the short-link metrics). */
const HEALTHY = page(200, TYPE.json, wire('{"status":"ok"}'));
const INTERNAL_ERROR = page(500, TYPE.text, wire('Internal Server Error\n'));

export interface RedirectorDeps {
  config: Config;
  logger: Logger;
  sql: Sql;
  /** Link lookups and readiness; best without an offline queue, so a dead Redis fails fast. */
  redis: RedisClient;
  /** Dedicated to the invalidation subscription. */
  subscriber: RedisClient;
  /** Dedicated to BullMQ (maxRetriesPerRequest: null). */
  queueConnection: RedisClient;
}

/** The short-link server: routes, lookup, click capture. Connections are the caller's to close. */
export function createRedirector({ config, logger, sql, redis, subscriber, queueConnection }: RedirectorDeps) {
  const native = uwsImplementation() === 'native';
  const errorSpool = rateLimitedLog(logger, 'error');
  const spool = createClickSpool({
    dir: config.CLICK_SPOOL_DIR,
    maxBytes: config.CLICK_SPOOL_MAX_BYTES,
    onWriteError: (error) => {
      metrics.spoolWriteFailures++;
      errorSpool(
        { err: error, dir: config.CLICK_SPOOL_DIR, held: clicks.size() },
        'click spool write failed; click batches stay in memory until the queue or the spool takes them',
      );
    },
  });
  const metrics: Metrics = new Metrics({
    bufferedClicks: () => clicks.size(),
    lruSize: () => lookup.size(),
    lruBytes: () => lookup.bytes(),
    domainCacheSize: () => domains.size(),
    domainCacheBytes: () => domains.bytes(),
    spoolBytes: () => spool.bytes(),
    spooling: () => clicks.spooling(),
    native,
  });
  const keys = redisKeys(config.REDIS_PREFIX);
  const lookup = createLinkLookup({ config, keys, redis, subscriber, sql, metrics, logger });
  const domains = createDomainLookup({ config, keys, redis, subscriber, sql, logger });
  const clicks = createClickBuffer({ config, connection: queueConnection, spool, metrics, logger });
  const responder = new Responder(native);
  const requests = createRequestPath({
    config,
    logger,
    hostnames: createHostnames(config.SHORT_URL_BASE),
    domains,
    defaultSite: domainAnswers(config.DEFAULT_DOMAIN_APPS, config.NOT_FOUND_URL),
    links: lookup,
    longLinks: createLongLinks({ config, keys, redis, sql, logger }),
    misses: createMissLimiter({ ratePerSecond: config.UNKNOWN_CODE_RATE, burst: config.UNKNOWN_CODE_BURST }),
    clicks,
    metrics,
    responder,
    pages: deadEndAnswers(config.BRAND_NAME),
    resolveAddress: clientAddressResolver(config.TRUST_PROXY),
    debugPages: createDebugPages({ config, sql, logger }),
    passwords: createLinkPasswords({ config, keys, redis }),
    caps: createClickCaps({ keys, redis }),
  });
  /**
   * Ready means able to answer visitors: not shutting down, the spool has room, and links can be
   * found (Redis or PostgreSQL answers, or the in-process cache holds links). An outage of Redis
   * or PostgreSQL alone reaches every redirector at once: were that unready, a load balancer would
   * pull them all, while the cache and the spool ride it out. The detail is served on the metrics
   * listener only.
   */
  const readiness = dependencyReadiness(
    { redis, sql },
    {
      accepting: () => !responder.closing,
      // Clicks piling up on this instance's disk, or a disk refusing them while they must go there: send visitors elsewhere.
      spool: () => spool.bytes() <= config.CLICK_SPOOL_READY_MAX_BYTES && !(clicks.spooling() && spool.failing()),
    },
    {
      ready: ({ accepting, spool: spoolState, redis: redisState, postgres }) =>
        accepting === 'ok' && spoolState === 'ok' && (redisState === 'ok' || postgres === 'ok' || lookup.size() > 0),
      detail: () => ({ spooling: clicks.spooling(), spoolBytes: spool.bytes(), cachedLinks: lookup.size() }),
    },
  );
  const uWS = uws.module;
  const app = uWS.App();
  // What changes after start, besides the parts' own state: the listening socket and what drops
  // the connections (here), responder.closing (set at shutdown) and the request path's count of
  // lookups in flight.
  let listenSocket: us_listen_socket | undefined;
  let dropConnections = () => {};

  /** Public readiness, for load balancers: the status alone, never which dependency is down. */
  function publicReadiness(res: HttpResponse, head: boolean) {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    void readiness().then((report) => {
      const answer = page(readinessStatus(report), TYPE.json, JSON.stringify({ status: report.status }));
      if (!aborted) res.cork(() => responder.send(res, head, answer));
    });
  }

  /** A bug must cost one request, not the process. */
  const guarded = (handler: (res: HttpResponse, req: HttpRequest) => void, head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    try {
      handler(res, req);
    } catch (error) {
      logger.error({ err: error, path: req.getUrl() }, 'request failed');
      try {
        responder.send(res, head, INTERNAL_ERROR);
      } catch {
        // Already answered (or aborted): nothing more to say.
      }
    }
  };

  // uWebSockets.js matches method and path natively; exact paths win over the wildcard.
  for (const head of [false, true]) {
    const route = (path: string, handler: (res: HttpResponse, req: HttpRequest) => void) =>
      head ? app.head(path, guarded(handler, head)) : app.get(path, guarded(handler, head));
    route('/healthz', (res) => responder.send(res, head, HEALTHY));
    route('/readyz', (res) => publicReadiness(res, head));
    route('/.well-known/apple-app-site-association', (res, req) => requests.associationFile(res, req, head, 'apple'));
    route('/.well-known/assetlinks.json', (res, req) => requests.associationFile(res, req, head, 'android'));
    route('/*', (res, req) => requests.shortLink(res, req, head));
  }
  // A protected link's password form posts back to the short URL.
  app.post(
    '/*',
    guarded((res, req) => requests.unlockLink(res, req), false),
  );
  app.any('/*', (res) => responder.send(res, false, METHOD_NOT_ALLOWED));

  return {
    metrics,
    /** The detailed readiness report, for the metrics listener. */
    readiness,
    implementation: native ? ('native' as const) : ('fallback' as const),

    /** Starts accepting connections; resolves with the bound port (useful with port 0). */
    listen(port: number, host: string): Promise<number> {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
          listenSocket = socket;
          dropConnections = connectionDropper(app, socket);
          resolve(uWS.us_socket_local_port(socket));
        });
      });
    },

    /** Stops accepting connections; /readyz turns unavailable. */
    stopAccepting(): void {
      responder.closing = true;
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
    },

    /**
     * Lets in-flight lookups answer, drops remaining connections, then flushes the click buffer
     * (bounded) and closes the queue. Every click that got a response is flushed or spooled;
     * rejects when some were neither.
     */
    async drain(): Promise<void> {
      const deadline = Date.now() + DRAIN_MS;
      while (requests.inFlight() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      // No answer may go out once the clicks are flushed: its click would be lost.
      dropConnections();
      const lost = await clicks.close(CLICK_FLUSH_TIMEOUT_MS);
      lookup.close();
      domains.close();
      // A failed step: the process exits 1, so a supervisor or an operator sees the loss.
      if (lost > 0) throw new Error(`${lost} clicks neither queued nor spooled at shutdown`);
    },

    /** stopAccepting, then drain: what tests and the bench call. */
    async close(): Promise<void> {
      if (responder.closing && !listenSocket) return;
      this.stopAccepting();
      await this.drain();
    },
  };
}

export type Redirector = ReturnType<typeof createRedirector>;
