import {
  type Config,
  detectPlatform,
  type InstallClick,
  isExpired,
  newInstallToken,
  PASSWORD_FIELD,
  primaryLanguage,
  shortUrls,
} from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog } from '@deeplink/core/runtime';
import type { HttpRequest, HttpResponse } from 'uws-bundled';
import type { ClickBuffer } from './click-buffer.js';
import type { DebugPages } from './debug-pages.js';
import { clientAddress } from './client-address.js';
import type { DomainAnswers, DomainEntry, DomainLookup } from './domain-lookup.js';
import type { createHostnames } from './hostnames.js';
import { type CappedLink, type ClickCaps, isCapped } from './click-caps.js';
import { getsPreview, type LinkAnswer, linkAnswer, type LinkAnswers, type StoreRedirect } from './link-answers.js';
import type { LinkEntry } from './link-cache.js';
import { isProtected, type LinkPasswords, type PasswordVerdict, type ProtectedLink } from './link-passwords.js';
import type { LinkLookup } from './link-lookup.js';
import type { LongLinkEntry, LongLinks } from './long-links.js';
import type { Metrics, ResponseStatus } from './metrics.js';
import type { createMissLimiter } from './miss-limiter.js';
import { type Answer, type deadEndAnswers, METHOD_NOT_ALLOWED, type Page, page, type Responder, TYPE } from './responses.js';
import { uwsImplementation } from './uws.js';
import { wire } from './wire.js';

/** Short codes and custom slugs; anything else is a 404 without touching a cache or the database. */
const CODE = /^[A-Za-z0-9_-]{1,64}$/;
/** Longer User-Agent or Referer values are cut before they go into a click. */
const MAX_HEADER_CHARS = 1024;
/** The largest password form a POST may send; the form holds one field of at most 128 characters. */
const MAX_FORM_BYTES = 4096;

const HEADER = {
  userAgent: wire('user-agent'),
  referer: wire('referer'),
  forwardedFor: wire('x-forwarded-for'),
  host: wire('host'),
  acceptLanguage: wire('accept-language'),
  cookie: wire('cookie'),
  forwardedProto: wire('x-forwarded-proto'),
};
const BAD_HOST = page(400, TYPE.text, wire('Bad Request: the Host header names no domain\n'));
const FORM_TOO_LARGE = page(413, TYPE.text, wire('Content Too Large: a password form is a few bytes\n'));

/**
 * What a request asks for: the link of its path's code, its debug page, one of its domain's
 * association files, or (a POST of the password form) the link after its password.
 */
type Wanted = 'link' | 'debug' | 'apple' | 'android' | 'unlock';

/** What a POST of the password form brings. */
interface Unlock {
  password: string;
  /** The visit came over https (as a trusted proxy says): the pass cookie is Secure. */
  secure: boolean;
}

/** The query that asks for a link's debug page instead of its redirect, as Firebase Dynamic Links had it. */
const DEBUG_PARAM = 'd';
const native = uwsImplementation() === 'native';

/**
 * One request on its way through the steps below. Everything it needs from the request is read
 * into it at once: uWebSockets.js forbids reading the request after an await.
 */
interface Visit {
  res: HttpResponse;
  /** The request, while it may still be read (until the first await); then null. */
  req: HttpRequest | null;
  head: boolean;
  wants: Wanted;
  /** The path without its slash and query: a code, when it is one. */
  code: string;
  /** The query of the path `/` (a long link's parameters); '' for every other path. */
  query: string;
  /** The custom domain the Host header names; '' for the default domain, null for a Host no domain can have. */
  hostname: string | null;
  userAgent: string;
  referrer: string;
  /** X-Forwarded-For, read only when the proxy in front is trusted. */
  forwardedFor: string;
  /**
   * Accept-Language, read only when it is needed: for a store answer that hands out an install
   * token, or before a lookup beyond the caches (the answer is not known yet, and the request cannot
   * be read afterwards). undefined until then.
   */
  acceptLanguage: string | undefined;
  /** The client address, once it was needed before the answer (a lookup beyond the caches). */
  address: string | undefined;
  /** The Cookie header, read only when a protected link asks for its pass (or before a lookup); undefined until then. */
  cookie: string | undefined;
  /** The password form's post; null for every other request. */
  unlock: Unlock | null;
  /** The domain's answers once found; null for a host no account holds active. */
  site: DomainAnswers | null;
  /** The time of the visit; after a lookup, the time it came back. */
  now: number;
}

/** A lookup beyond the in-process caches, and the step that takes its result. */
interface LookupStep<E> {
  /** What the log says when the lookup fails. */
  failure: string;
  /** The result names nothing: it spends the address's miss budget. */
  unknown(entry: E): boolean;
  next(visit: Visit, entry: E): void;
}

export interface RequestPathDeps {
  config: Pick<Config, 'TRUST_PROXY' | 'BRAND_NAME' | 'SHORT_URL_BASE'>;
  logger: Logger;
  hostnames: ReturnType<typeof createHostnames>;
  domains: DomainLookup;
  /** The default domain's answers: the operator's apps (DEFAULT_DOMAIN_APPS) and NOT_FOUND_URL. */
  defaultSite: DomainAnswers;
  links: LinkLookup;
  longLinks: LongLinks;
  misses: ReturnType<typeof createMissLimiter>;
  clicks: ClickBuffer;
  metrics: Metrics;
  responder: Responder;
  pages: ReturnType<typeof deadEndAnswers>;
  resolveAddress: (peer: () => string, forwardedFor: string) => string;
  debugPages: DebugPages;
  passwords: LinkPasswords;
  caps: ClickCaps;
}

/**
 * The short-link request, as steps a visit goes through in order:
 *
 * 1. `readVisit`: read the request;
 * 2. `findDomain`: the domain the Host header names (at once when known, else after a lookup);
 * 3. `findLink`: the link the code names on it (at once when cached, else after a lookup); a long
 *    link (`/?link=…`) first finds the code of the link it became (`findLongLink`);
 * 4. `answerLink`: choose the answer (expired, preview, the platform's destination); a protected
 *    link first asks for its password or checks its pass (`answerProtected`, see link-passwords.ts),
 *    a capped link's destination waits for its count (`answerCapped`, see click-caps.ts);
 * 5. `reply`: record the click, count the answer, send it.
 *
 * Association files take steps 1, 2, then `answerFile` and `reply`; a short link with `?d=1`
 * takes steps 1, 2, then `debugLink` (its debug page, see debug-pages.ts) and `reply`; a POST of
 * the password form reads its body (`unlockLink`), then takes steps 2 to 5. A cached redirect of a
 * link without a password or a cap runs through without a promise, and allocates nothing beyond the
 * visit and what it reads.
 */
export function createRequestPath(deps: RequestPathDeps) {
  const {
    config,
    hostnames,
    domains,
    defaultSite,
    links,
    misses,
    clicks,
    metrics,
    responder,
    pages,
    resolveAddress,
    debugPages,
    longLinks,
    passwords,
    caps,
  } = deps;
  const shortUrl = shortUrls(config.SHORT_URL_BASE);
  const defaultHostname = new URL(config.SHORT_URL_BASE).hostname;
  const warnLookup = rateLimitedLog(deps.logger, 'warn');
  const trustProxy = config.TRUST_PROXY !== false;
  /** Lookups beyond the caches not yet answered: shutdown lets them finish. */
  let inFlight = 0;

  /**
   * Step 1: everything the steps need from the request, in the one object a cached redirect
   * allocates. Every field is set here, so all visits share one shape.
   */
  function readVisit(res: HttpResponse, req: HttpRequest, head: boolean, wants: Wanted): Visit {
    const url = req.getUrl();
    const queryAt = url.indexOf('?'); // the JS fallback leaves the query on the URL
    const code = queryAt === -1 ? url.slice(1) : url.slice(1, queryAt);
    const query = wants === 'link' ? queryOf(req, url, queryAt) : '';
    return {
      res,
      req,
      head,
      wants: query !== '' && wants === 'link' && asksForDebug(query) ? 'debug' : wants,
      code,
      query: code === '' ? query : '',
      hostname: hostnames.custom(req.getHeader(HEADER.host)),
      userAgent: req.getHeader(HEADER.userAgent).slice(0, MAX_HEADER_CHARS),
      referrer: req.getHeader(HEADER.referer).slice(0, MAX_HEADER_CHARS),
      forwardedFor: trustProxy ? req.getHeader(HEADER.forwardedFor) : '',
      acceptLanguage: undefined,
      address: undefined,
      cookie: undefined,
      unlock: null,
      site: null,
      now: Date.now(),
    };
  }

  /**
   * Step 2: the answers of the Host's domain, at once for the default domain and for custom
   * domains this process knows, after a lookup otherwise. A Host no domain can have is answered 400
   * before any cache or lookup (see hostnames.ts).
   */
  function findDomain(visit: Visit) {
    const { hostname } = visit;
    if (hostname === '') return onDomain(visit, defaultSite);
    if (hostname === null) return reply(visit, BAD_HOST);
    const known = domains.peek(hostname, visit.now);
    if (known !== undefined) return onDomain(visit, known.answers);
    if (!mayLookUp(visit)) return onDomain(visit, null);
    afterLookup(visit, domains.load(hostname), DOMAIN_LOOKUP);
  }

  const DOMAIN_LOOKUP: LookupStep<DomainEntry> = {
    failure: 'domain lookup failed',
    unknown: (entry) => entry.answers === null,
    next: (visit, entry) => onDomain(visit, entry.answers),
  };

  /** …then what the request wants of that domain. */
  function onDomain(visit: Visit, site: DomainAnswers | null) {
    visit.site = site;
    if (visit.wants === 'link' || visit.wants === 'unlock') findLink(visit);
    else if (visit.wants === 'debug') visit.code === '' && visit.query !== '' ? findLongLink(visit) : debugLink(visit);
    else answerFile(visit, visit.wants);
  }

  /** Step 3: the link the code names on the domain, from the cache or after a lookup. */
  function findLink(visit: Visit) {
    if (visit.code === '' && visit.query !== '') return findLongLink(visit);
    if (visit.site === null || !CODE.test(visit.code)) return reply(visit, notFound(visit));
    const id = linkCacheId(visit);
    const cached = links.peek(id, visit.now);
    if (cached !== undefined) return answerLink(visit, cached);
    if (!mayLookUp(visit)) return reply(visit, notFound(visit));
    afterLookup(visit, links.load(id), LINK_LOOKUP);
  }

  /**
   * Step 3 of a long link (`/?link=…`): the code of the link it became, then on as that code. Only
   * custom domains with allowed URL patterns answer long links, and only to destinations they allow.
   */
  function findLongLink(visit: Visit) {
    const domain = visit.site?.longLinks;
    const wanted = domain && longLinks.wanted(visit.query, domain);
    if (!domain || !wanted) return reply(visit, notFound(visit));
    const code = longLinks.peek(visit.hostname!, wanted.key, visit.now);
    if (code !== undefined) return onLongLinkCode(visit, code);
    if (!mayLookUp(visit)) return reply(visit, notFound(visit));
    afterLookup(visit, longLinks.load(visit.hostname!, domain, wanted), LONG_LINK_LOOKUP);
  }

  /** A long link's code: the visit goes on as a visit of that short link. */
  function onLongLinkCode(visit: Visit, code: string) {
    visit.code = code;
    visit.query = '';
    if (visit.wants === 'debug') debugLink(visit);
    else findLink(visit);
  }

  const LONG_LINK_LOOKUP: LookupStep<LongLinkEntry> = {
    failure: 'long link lookup failed',
    // Making a link spends the miss budget too: one address cannot make links at will.
    unknown: (entry) => entry.code === null || entry.created,
    next: (visit, entry) => (entry.code === null ? reply(visit, notFound(visit)) : onLongLinkCode(visit, entry.code)),
  };

  const LINK_LOOKUP: LookupStep<LinkEntry> = {
    failure: 'link lookup failed',
    unknown: (entry) => entry.link === null,
    next: answerLink,
  };

  /**
   * Step 4: what the link answers this visit. Only a visit reaching a destination or the preview is
   * a click. A protected link asks for its password first (even when expired: where it went is the
   * owner's secret until then).
   */
  function answerLink(visit: Visit, { link, answers }: LinkEntry) {
    // A POST is the password form's: only a protected link takes one.
    if (link === null) return reply(visit, visit.unlock === null ? notFound(visit) : METHOD_NOT_ALLOWED);
    if (isProtected(link)) return answerProtected(visit, link, answers);
    if (visit.unlock !== null) return reply(visit, METHOD_NOT_ALLOWED);
    answerOpenLink(visit, link, answers);
  }

  /** …a link without a password, or one the visitor has the password of; `cookie`: a pass to hand out. */
  function answerOpenLink(visit: Visit, link: CachedLink, answers: LinkAnswers, cookie?: string) {
    // Expired: not counted as a click, like the 410.
    if (isExpired(link, visit.now)) return reply(visit, answers.expired ?? pages.gone, undefined, undefined, cookie);
    // The visit is queued like a click: the worker, reading the same list, counts it as a preview.
    if (getsPreview(answers, visit.userAgent)) return reply(visit, answers.preview, link.id, undefined, cookie);
    const found = linkAnswer(answers, detectPlatform(visit.userAgent), visit.userAgent);
    if (found.kind === 'unavailable') {
      warnLookup({ code: linkCacheId(visit) }, 'link has no safe destination');
      return reply(visit, notFound(visit));
    }
    if (isCapped(link)) return answerCapped(visit, link, answers, found, cookie);
    reply(visit, found, link.id, found.store, cookie);
  }

  /**
   * A capped link: the destination while it has clicks left (a GET takes one, see click-caps.ts),
   * else its overflow redirect or the 410 page, neither of them a click.
   */
  function answerCapped(
    visit: Visit,
    link: CappedLink,
    answers: LinkAnswers,
    found: Exclude<LinkAnswer, { kind: 'unavailable' }>,
    cookie?: string,
  ) {
    afterLookup(visit, caps.admits(link, !visit.head), {
      failure: 'click cap check failed',
      unknown: () => false,
      next: (visit, admitted: boolean) =>
        admitted
          ? reply(visit, found, link.id, found.store, cookie)
          : reply(visit, answers.overflow ?? pages.gone, undefined, undefined, cookie),
    });
  }

  /**
   * A protected link: a GET or HEAD with a pass goes on as an open link, one without gets the form
   * (not a click, and nothing of the link but its preview title: crawlers too). A POST of the form
   * has its password checked (see link-passwords.ts), off this path's synchronous part.
   */
  function answerProtected(visit: Visit, link: ProtectedLink, answers: LinkAnswers) {
    const id = linkCacheId(visit);
    const { unlock } = visit;
    if (unlock === null) {
      if (passwords.admits(cookieOf(visit), id, link, visit.now)) return answerOpenLink(visit, link, answers);
      return reply(visit, passwords.ask(link));
    }
    visit.address ??= clientAddress(visit.res, visit.forwardedFor, resolveAddress);
    const verdict = passwords.check(
      id,
      visit.code,
      link,
      { address: visit.address, password: unlock.password, secure: unlock.secure },
      visit.now,
    );
    afterLookup(visit, verdict, {
      failure: 'password check failed',
      unknown: () => false,
      next: (visit, verdict: PasswordVerdict) => {
        if (verdict.kind === 'right') return answerOpenLink(visit, link, answers, verdict.cookie);
        if (verdict.kind === 'wrong') return reply(visit, passwords.wrong(link));
        reply(visit, verdict.kind === 'limited' ? passwords.limited(link, verdict.retryAfterSeconds) : passwords.busy(link));
      },
    });
  }

  /**
   * The link's debug page instead of its answer: never a click. It fetches and queries, so each
   * client address gets a few (see debug-pages.ts), and an unknown code gets a page of its own.
   */
  function debugLink(visit: Visit) {
    const { site, hostname } = visit;
    if (site === null || !CODE.test(visit.code)) return reply(visit, notFound(visit));
    visit.address ??= clientAddress(visit.res, visit.forwardedFor, resolveAddress);
    if (!debugPages.admits(visit.address, visit.now)) return reply(visit, debugPages.busy);
    const domain = { hostname: hostname || defaultHostname, apps: site.apps, shortUrl: shortUrl(visit.code, hostname) };
    const id = linkCacheId(visit);
    const cached = links.peek(id, visit.now);
    const answer = debugPages.serve(async (): Promise<Page<200 | 404>> => {
      const { link } = cached ?? (await links.load(id));
      return link === null ? debugPages.forUnknown(domain) : debugPages.forLink(link, domain);
    });
    afterLookup(visit, answer, DEBUG_PAGE);
  }

  const DEBUG_PAGE: LookupStep<Page<200 | 404>> = {
    failure: 'debug page failed',
    unknown: () => false,
    next: (visit, answer) => reply(visit, answer),
  };

  /** An association file of the domain (built when its record is read), or a 404. */
  function answerFile(visit: Visit, file: 'apple' | 'android') {
    reply(visit, visit.site?.[file] ?? pages.notFound);
  }

  /**
   * Step 5: records the click of `clickedLink` (never for HEAD), counts the answer, and sends it.
   * The click goes first: the client address cannot be read once the response has ended. `store`:
   * the answer sends the visitor to an app store, which adds a REDIRECT event to the click. A store
   * answer that hands out install tokens gets a new one, written into it and carried by that event
   * with the visitor's language.
   */
  function reply(visit: Visit, answer: Answer<ResponseStatus>, clickedLink?: string, store?: StoreRedirect, cookie?: string) {
    const token = answer.minted === undefined ? undefined : newInstallToken();
    if (clickedLink !== undefined && !visit.head) {
      const address = visit.address ?? clientAddress(visit.res, visit.forwardedFor, resolveAddress);
      const install: InstallClick | undefined =
        token === undefined ? undefined : { token, language: primaryLanguage(acceptLanguage(visit)) };
      clicks.push(
        { linkId: clickedLink, ts: visit.now, ip: address, userAgent: visit.userAgent, referrer: visit.referrer },
        store,
        install,
      );
    }
    metrics.response(answer.status);
    responder.send(visit.res, visit.head, answer, token, cookie);
  }

  /** The visit's Accept-Language, read from the request the first time it is asked for. */
  function acceptLanguage(visit: Visit): string {
    visit.acceptLanguage ??= visit.req?.getHeader(HEADER.acceptLanguage) ?? '';
    return visit.acceptLanguage;
  }

  /** The visit's Cookie header, read from the request the first time it is asked for. */
  function cookieOf(visit: Visit): string {
    visit.cookie ??= visit.req?.getHeader(HEADER.cookie) ?? '';
    return visit.cookie;
  }

  /**
   * An unknown code: the domain's not-found redirect when it has one (NOT_FOUND_URL on the default
   * domain), else the 404 page. No-store like every answer: the code may be created later.
   */
  function notFound(visit: Visit): Answer<ResponseStatus> {
    return visit.site?.notFound ?? pages.notFound;
  }

  /**
   * Whether a lookup beyond the caches may run: an unknown code or hostname reaches Redis and
   * PostgreSQL at most at UNKNOWN_CODE_RATE per address, so a scan of random ones cannot.
   */
  function mayLookUp(visit: Visit): boolean {
    visit.address ??= clientAddress(visit.res, visit.forwardedFor, resolveAddress);
    if (misses.allows(visit.address, visit.now)) return true;
    metrics.lookupsThrottled++;
    return false;
  }

  /**
   * Waits for a lookup, then goes on with `step.next`, unless the client left meanwhile; a failed
   * lookup answers 503. uWebSockets.js needs to hear of an abort to keep the response open.
   */
  function afterLookup<E>(visit: Visit, lookup: Promise<E>, step: LookupStep<E>): void {
    // The last moment the request can be read: the answer may turn out to hand out an install token,
    // or the link to be protected.
    acceptLanguage(visit);
    cookieOf(visit);
    visit.req = null;
    let aborted = false;
    visit.res.onAborted(() => {
      aborted = true;
    });
    inFlight++;
    lookup
      .then(
        (entry) => {
          if (step.unknown(entry)) misses.spend(visit.address!, Date.now());
          if (aborted) return;
          visit.res.cork(() => {
            visit.now = Date.now();
            step.next(visit, entry);
          });
        },
        (error: unknown) => {
          warnLookup({ err: error }, step.failure);
          metrics.response(503); // counted even when the client has left: the failure is the store's
          if (!aborted) visit.res.cork(() => responder.send(visit.res, visit.head, pages.unavailable));
        },
      )
      .finally(() => inFlight--);
  }

  return {
    /** GET or HEAD of a short link: `/{code}` on the Host's domain. */
    shortLink(res: HttpResponse, req: HttpRequest, head: boolean): void {
      findDomain(readVisit(res, req, head, 'link'));
    },
    /**
     * POST of a protected link's password form (urlencoded, at most MAX_FORM_BYTES): on to the
     * link once the body is in. The request is read first: it cannot be once the body is awaited.
     */
    unlockLink(res: HttpResponse, req: HttpRequest): void {
      const visit = readVisit(res, req, false, 'unlock');
      acceptLanguage(visit);
      cookieOf(visit);
      const secure = trustProxy && req.getHeader(HEADER.forwardedProto).toLowerCase() === 'https';
      visit.req = null;
      readBody(res, MAX_FORM_BYTES, (body) => {
        visit.now = Date.now();
        if (body === undefined) return reply(visit, FORM_TOO_LARGE);
        visit.unlock = { password: new URLSearchParams(body).get(PASSWORD_FIELD) ?? '', secure };
        findDomain(visit);
      });
    },
    /** GET or HEAD of an association file of the Host's domain. */
    associationFile(res: HttpResponse, req: HttpRequest, head: boolean, file: 'apple' | 'android'): void {
      findDomain(readVisit(res, req, head, file));
    },
    /** Lookups started and not yet answered. */
    inFlight: () => inFlight,
  };
}

/**
 * Reads a request body of at most `maxBytes`, then calls `done` with it (as UTF-8 text) inside a
 * cork, or with undefined once it is too large; never when the client leaves.
 */
function readBody(res: HttpResponse, maxBytes: number, done: (body: string | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  res.onAborted(() => {
    finished = true;
  });
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > maxBytes) {
      finished = true;
      return res.cork(() => done(undefined));
    }
    // uWebSockets.js reuses the chunk's memory once this returns: copy it.
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast) return;
    finished = true;
    res.cork(() => done(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * A short link's query, '' without one: the native server hands it apart from the path (undefined
 * without one, so a plain redirect pays one native call), the JS fallback leaves it on the URL.
 */
function queryOf(req: HttpRequest, url: string, queryAt: number): string {
  if (queryAt !== -1) return url.slice(queryAt + 1);
  return native ? (req.getQuery() ?? '') : '';
}

/** Whether a query asks for the debug page (`d=1`); parsed only when there is one. */
const asksForDebug = (query: string): boolean => new URLSearchParams(query).get(DEBUG_PARAM) === '1';

/** The link cache's id of the visit's code: custom domains' links are cached as hostname/code (see linkCacheId). */
const linkCacheId = ({ hostname, code }: Visit): string => (hostname ? `${hostname}/${code}` : code);
