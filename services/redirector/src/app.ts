import {
  clientAddressResolver,
  type Config,
  deadEndPages,
  detectPlatform,
  isExpired,
  isPreviewCrawler,
  PAGE_CSP,
  redisKeys,
} from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';
import { dependencyReadiness, type Logger, rateLimitedLog, readinessStatus } from '@deeplink/core/runtime';
import type { HttpRequest, HttpResponse, RecognizedString, us_listen_socket } from 'uws-bundled';
import { createClickBuffer } from './click-buffer.js';
import { createClickSpool } from './click-spool.js';
import { clientAddress } from './client-address.js';
import { createMissLimiter } from './miss-limiter.js';
import { linkAnswer, type StoreRedirect } from './link-answers.js';
import { createLinkLookup, type LinkEntry } from './link-lookup.js';
import { createDomainLookup, domainAnswers, type DomainAnswers } from './domain-lookup.js';
import { createHostnames } from './hostnames.js';
import { Metrics } from './metrics.js';
import { uws, uwsImplementation } from './uws.js';
import { byteLength, wire } from './wire.js';

/** Short codes and custom slugs; anything else is a 404 without touching a cache or the database. */
const CODE = /^[A-Za-z0-9_-]{1,64}$/;
/** Longer User-Agent or Referer values are cut before they go into a click. */
const MAX_HEADER_CHARS = 1024;
/** At shutdown: how long in-flight lookups get to answer, and how long the last click flush may take. */
const DRAIN_MS = 1_000;
const CLICK_FLUSH_TIMEOUT_MS = 10_000;

// Everything written or asked for on every request, in the form uWebSockets.js takes fastest.
const STATUS: Record<number, RecognizedString> = Object.fromEntries(
  Object.entries({
    200: '200 OK',
    302: '302 Found',
    400: '400 Bad Request',
    404: '404 Not Found',
    405: '405 Method Not Allowed',
    410: '410 Gone',
    500: '500 Internal Server Error',
    503: '503 Service Unavailable',
  }).map(([status, line]) => [status, wire(line)]),
);
const HEADER = {
  location: wire('Location'),
  cacheControl: wire('Cache-Control'),
  contentType: wire('Content-Type'),
  contentLength: wire('Content-Length'),
  connection: wire('Connection'),
  userAgent: wire('user-agent'),
  referer: wire('referer'),
  forwardedFor: wire('x-forwarded-for'),
  host: wire('host'),
  contentSecurityPolicy: wire('Content-Security-Policy'),
};
/** Every HTML page: only its own style and the iOS page's script may apply (see PAGE_CSP). */
const CSP = wire(PAGE_CSP);
/** Links are editable and every visit must reach analytics, so nothing may be cached downstream. */
const NO_STORE = wire('private, no-store');
const CLOSE = wire('close');
const BAD_HOST = wire('Bad Request: the Host header names no domain\n');
const TYPE = {
  html: wire('text/html; charset=utf-8'),
  json: wire('application/json'),
  text: wire('text/plain'),
};

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

/** What the handler knows about a visit, read synchronously before any await (uWS rule). */
interface Visit {
  head: boolean;
  userAgent: string;
  referrer: string;
  /** X-Forwarded-For, read only when the proxy in front is trusted. */
  forwardedFor: string;
  /** The client address, when it was needed before the answer (a lookup beyond the caches). */
  address?: string;
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
  const hostnames = createHostnames(config.SHORT_URL_BASE);
  /** The default domain's answers: the operator's apps (DEFAULT_DOMAIN_APPS) and NOT_FOUND_URL. */
  const defaultSite = domainAnswers(config.DEFAULT_DOMAIN_APPS, config.NOT_FOUND_URL);
  const clicks = createClickBuffer({ config, connection: queueConnection, spool, metrics, logger });
  const warnLookup = rateLimitedLog(logger, 'warn');
  const resolveAddress = clientAddressResolver(config.TRUST_PROXY);
  const misses = createMissLimiter({ ratePerSecond: config.UNKNOWN_CODE_RATE, burst: config.UNKNOWN_CODE_BURST });
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
      accepting: () => !closing,
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
  let listenSocket: us_listen_socket | undefined;
  let closing = false;
  let inFlight = 0;
  const pages = deadEndPages(config.BRAND_NAME);
  const PAGE = { notFound: wire(pages.notFound), gone: wire(pages.gone), unavailable: wire(pages.unavailable) };

  /** Ends a response; HEAD gets the same headers and length without the body. */
  function send(
    res: HttpResponse,
    status: number,
    type: RecognizedString,
    body: RecognizedString,
    head: boolean,
    headers: [string, string][] = [],
  ): void {
    res.writeStatus(STATUS[status]!).writeHeader(HEADER.contentType, type).writeHeader(HEADER.cacheControl, NO_STORE);
    if (type === TYPE.html) res.writeHeader(HEADER.contentSecurityPolicy, CSP);
    for (const [name, value] of headers) res.writeHeader(name, value);
    // While shutting down, tell keep-alive clients to reconnect (to another instance).
    if (!head) {
      res.end(body, closing);
      return;
    }
    // HEAD: the GET's length without its body. This uWS build never completes
    // endWithoutBody(length) for length > 0, and the JS fallback's end('') states no length.
    res.writeHeader(HEADER.contentLength, String(byteLength(body)));
    if (!native) {
      res.end('', closing);
      return;
    }
    if (closing) res.writeHeader(HEADER.connection, CLOSE);
    res.endWithoutBody();
  }

  /** A Host no domain can have (see hostnames.ts): refused before any cache or lookup. */
  function badHost(res: HttpResponse, head: boolean) {
    metrics.response(400);
    send(res, 400, TYPE.text, BAD_HOST, head);
  }

  function redirect(res: HttpResponse, location: RecognizedString) {
    metrics.response(302);
    res.writeStatus(STATUS[302]!).writeHeader(HEADER.location, location).writeHeader(HEADER.cacheControl, NO_STORE);
    res.end(undefined, closing);
  }

  /**
   * An unknown code: the domain's not-found URL when set (NOT_FOUND_URL on the default domain),
   * else the 404 page. No-store like every answer: the code may be created later.
   */
  function notFound(res: HttpResponse, head: boolean, site: DomainAnswers | null) {
    if (site?.notFoundUrl !== undefined) return redirect(res, site.notFoundUrl);
    metrics.response(404);
    send(res, 404, TYPE.html, PAGE.notFound, head);
  }

  /**
   * Queues a visit; before the response ends, since the client address cannot be read afterwards.
   * `store`: the answer sent the visitor to an app store, which adds a REDIRECT event.
   */
  function record(res: HttpResponse, linkId: string, visit: Visit, now: number, store?: StoreRedirect) {
    const ip = visit.address ?? clientAddress(res, visit.forwardedFor, resolveAddress);
    clicks.push({ linkId, ts: now, ip, userAgent: visit.userAgent, referrer: visit.referrer }, store);
  }

  function answer(res: HttpResponse, code: string, visit: Visit, site: DomainAnswers, { link, answers }: LinkEntry, now: number) {
    if (link === null) return notFound(res, visit.head, site);
    if (isExpired(link, now)) {
      if (answers.expired !== undefined) return redirect(res, answers.expired);
      metrics.response(410);
      return send(res, 410, TYPE.html, PAGE.gone, visit.head);
    }
    // Only links with a preview pay for the crawler test. The visit is queued like a click: the
    // worker, reading the same list, counts it as a preview.
    if (answers.preview !== undefined && isPreviewCrawler(visit.userAgent)) {
      if (!visit.head) record(res, link.id, visit, now);
      metrics.response(200);
      return send(res, 200, TYPE.html, answers.preview, visit.head);
    }
    const found = linkAnswer(link, answers, detectPlatform(visit.userAgent), config.BRAND_NAME);
    if (found.kind === 'unavailable') {
      warnLookup({ code }, 'link has no safe destination');
      return notFound(res, visit.head, site);
    }
    if (!visit.head) record(res, link.id, visit, now, found.store);
    if (found.kind === 'redirect') {
      redirect(res, found.location);
    } else {
      metrics.response(200);
      send(res, 200, TYPE.html, found.body, visit.head);
    }
  }

  /**
   * Calls `then` with the answers of the domain the Host header names: at once for the default
   * domain and for custom domains this process knows, after a lookup otherwise; null for a host
   * no account holds active. A Host no domain can have is answered 400 here. Reads the header:
   * call before any await (uWS rule).
   */
  function withSite(
    res: HttpResponse,
    req: HttpRequest,
    head: boolean,
    then: (site: DomainAnswers | null, now: number, hostname: string) => void,
  ) {
    const now = Date.now();
    const hostname = hostnames.custom(req.getHeader(HEADER.host));
    if (hostname === '') return then(defaultSite, now, hostname);
    if (hostname === null) return badHost(res, head);
    const known = domains.peek(hostname, now);
    if (known !== undefined) return then(known.answers, now, hostname);
    // An unknown hostname costs a lookup: bounded per address like unknown codes.
    const address = clientAddress(res, config.TRUST_PROXY !== false ? req.getHeader(HEADER.forwardedFor) : '', resolveAddress);
    if (!misses.allows(address, now)) {
      metrics.lookupsThrottled++;
      return then(null, now, hostname);
    }
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    inFlight++;
    domains
      .load(hostname)
      .then(
        (entry) => {
          if (entry.answers === null) misses.spend(address, Date.now());
          if (!aborted) res.cork(() => then(entry.answers, Date.now(), hostname));
        },
        (error: unknown) => {
          warnLookup({ err: error }, 'domain lookup failed');
          metrics.response(503);
          if (!aborted) res.cork(() => send(res, 503, TYPE.html, PAGE.unavailable, head, [['Retry-After', '5']]));
        },
      )
      .finally(() => inFlight--);
  }

  function shortLink(res: HttpResponse, req: HttpRequest, head: boolean) {
    const url = req.getUrl();
    const query = url.indexOf('?'); // the JS fallback leaves the query on the URL
    const code = query === -1 ? url.slice(1) : url.slice(1, query);
    const visit: Visit = {
      head,
      userAgent: req.getHeader(HEADER.userAgent).slice(0, MAX_HEADER_CHARS),
      referrer: req.getHeader(HEADER.referer).slice(0, MAX_HEADER_CHARS),
      forwardedFor: config.TRUST_PROXY !== false ? req.getHeader(HEADER.forwardedFor) : '',
    };
    withSite(res, req, head, (site, now, hostname) => {
      if (site === null || !CODE.test(code)) return notFound(res, head, site);
      // Links of custom domains are cached as hostname/code (see linkCacheId).
      linkOnSite(res, hostname === '' ? code : `${hostname}/${code}`, visit, site, now);
    });
  }

  function linkOnSite(res: HttpResponse, id: string, visit: Visit, site: DomainAnswers, now: number) {
    const cached = lookup.peek(id, now);
    if (cached !== undefined) return answer(res, id, visit, site, cached, now);

    // Beyond the caches: a scan of random codes reaches PostgreSQL at most at UNKNOWN_CODE_RATE per address.
    const address = (visit.address = clientAddress(res, visit.forwardedFor, resolveAddress));
    if (!misses.allows(address, now)) {
      metrics.lookupsThrottled++;
      return notFound(res, visit.head, site);
    }
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    inFlight++;
    lookup
      .load(id)
      .then(
        (entry) => {
          if (entry.link === null) misses.spend(address, Date.now());
          if (!aborted) res.cork(() => answer(res, id, visit, site, entry, Date.now()));
        },
        (error: unknown) => {
          warnLookup({ err: error }, 'link lookup failed');
          metrics.response(503);
          if (!aborted) res.cork(() => send(res, 503, TYPE.html, PAGE.unavailable, visit.head, [['Retry-After', '5']]));
        },
      )
      .finally(() => inFlight--);
  }

  /** Public readiness, for load balancers: the status alone, never which dependency is down. */
  function publicReadiness(res: HttpResponse, head: boolean) {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    void readiness().then((report) => {
      if (!aborted) res.cork(() => send(res, readinessStatus(report), TYPE.json, JSON.stringify({ status: report.status }), head));
    });
  }

  /** An association file of the requested domain (built when its record is read), or a 404. */
  const associationFile = (file: 'apple' | 'android') => (res: HttpResponse, req: HttpRequest, head: boolean) =>
    withSite(res, req, head, (site) => {
      const body = site?.[file];
      metrics.response(body === undefined ? 404 : 200);
      if (body === undefined) send(res, 404, TYPE.html, PAGE.notFound, head);
      else send(res, 200, TYPE.json, body, head);
    });
  const appleAssociation = associationFile('apple');
  const androidAssociation = associationFile('android');

  /** A bug must cost one request, not the process. */
  const guarded = (handler: (res: HttpResponse, req: HttpRequest) => void, head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    try {
      handler(res, req);
    } catch (error) {
      logger.error({ err: error, path: req.getUrl() }, 'request failed');
      try {
        send(res, 500, TYPE.text, 'Internal Server Error\n', head);
      } catch {
        // Already answered (or aborted): nothing more to say.
      }
    }
  };

  // uWebSockets.js matches method and path natively; exact paths win over the wildcard.
  for (const head of [false, true]) {
    const route = (path: string, handler: (res: HttpResponse, req: HttpRequest) => void) =>
      head ? app.head(path, guarded(handler, head)) : app.get(path, guarded(handler, head));
    route('/healthz', (res) => send(res, 200, TYPE.json, '{"status":"ok"}', head));
    route('/readyz', (res) => publicReadiness(res, head));
    route('/.well-known/apple-app-site-association', (res, req) => appleAssociation(res, req, head));
    route('/.well-known/assetlinks.json', (res, req) => androidAssociation(res, req, head));
    route('/*', (res, req) => shortLink(res, req, head));
  }
  app.any('/*', (res) => send(res, 405, TYPE.text, 'Method Not Allowed\n', false, [['Allow', 'GET, HEAD']]));

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
          resolve(uWS.us_socket_local_port(socket));
        });
      });
    },

    /** Stops accepting connections; /readyz turns unavailable. */
    stopAccepting(): void {
      closing = true;
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
      while (inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      // Not in the type definitions, but the native App has it: closes every open connection.
      (app as { close?: () => void }).close?.();
      const lost = await clicks.close(CLICK_FLUSH_TIMEOUT_MS);
      lookup.close();
      domains.close();
      // A failed step: the process exits 1, so a supervisor or an operator sees the loss.
      if (lost > 0) throw new Error(`${lost} clicks neither queued nor spooled at shutdown`);
    },

    /** stopAccepting, then drain: what tests and the bench call. */
    async close(): Promise<void> {
      if (closing && !listenSocket) return;
      this.stopAccepting();
      await this.drain();
    },
  };
}

export type Redirector = ReturnType<typeof createRedirector>;
