import {
  type CreateShortLinkBody,
  type CreateShortLinkResponse,
  DYNAMIC_LINK_INFO_FIELDS,
  type DynamicLinkParam,
  type DynamicLinkParams,
  dynamicLinkParamsFromInfo,
  type ErrorDetail,
  generateShortCode,
  invalidRequest,
  LINK_STAT_EVENTS,
  LINK_STAT_PLATFORMS,
  type LinkStatsResponse,
  longLinkParams,
  notFound,
  type RedisKeys,
  RESERVED_SLUGS,
  shortUrls,
} from '@deeplink/core';
import {
  type AnalyticsRepository,
  type DomainsRepository,
  findOrCreateDynamicLink,
  type LinksRepository,
  type Sql,
} from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';
import type { FastifyBaseLogger } from 'fastify';
import { appFunnel } from './app-funnel.js';
import type { Principal } from './auth-service.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** UNGUESSABLE codes: 17 base62 characters, 101 random bits (FDL promised 96). */
const UNGUESSABLE_LENGTH = 17;
/** SHORT codes start at FDL's 4 characters and grow by one every few taken draws. */
const SHORT_LENGTH = 4;
const SHORT_DRAWS_PER_LENGTH = 3;

/** FDL's warning code for each parameter the mapping warns about; any other is UNRECOGNIZED_PARAM (ignored). */
const WARNING_CODES: Partial<Record<DynamicLinkParam, string>> = {
  amv: 'UNNECESSARY_ANDROID_PACKAGE_MIN_VERSION',
  ius: 'UNNECESSARY_IOS_URL_SCHEME',
  isi: 'UNNECESSARY_IOS_APP_STORE_ID',
};

/** A SHORT code: random, as short as is free (longer after taken draws), never a reserved path. */
function shortCode(attempt: number): string {
  for (;;) {
    const code = generateShortCode(SHORT_LENGTH + Math.floor(attempt / SHORT_DRAWS_PER_LENGTH));
    if (!RESERVED_SLUGS.has(code.toLowerCase())) return code;
  }
}
const unguessableCode = () => generateShortCode(UNGUESSABLE_LENGTH);

/** What a request asks for, flattened: the parameters, where they go, and how its fields are named in answers. */
interface ShortLinkRequest {
  params: DynamicLinkParams;
  /** The short link domain as the caller wrote it (domainUriPrefix, or the long link's origin); undefined: the default. */
  prefix: string | undefined;
  prefixField: string;
  fieldOf: (param: DynamicLinkParam) => string;
  ignored: { field: string; message: string }[];
}

/**
 * Firebase Dynamic Links' REST API over this service's links: POST /v1/shortLinks makes (or finds
 * again) the link of an FDL link's parameters through the one mapping, GET /v1/{shortLink}/linkStats
 * counts its clicks and app events. Answers in FDL's shapes; docs/firebase-rest.md.
 */
export function firebaseRestService(deps: {
  sql: Sql;
  redis: RedisClient;
  keys: RedisKeys;
  links: LinksRepository;
  domains: DomainsRepository;
  analytics: AnalyticsRepository;
  shortUrlBase: string;
  maxDestinationBytes: number;
  log: FastifyBaseLogger;
  now?: () => number;
}) {
  const shortUrl = shortUrls(deps.shortUrlBase);
  const defaultPrefix = deps.shortUrlBase.replace(/\/+$/, '');
  const now = deps.now ?? Date.now;

  /** The custom domain id of a short link domain the caller wrote (null: the default domain); 400 naming `field` otherwise. */
  async function domainIdOf(principal: Principal, prefix: string | undefined, field: string): Promise<string | null> {
    if (prefix === undefined) return null;
    // dynamicLinkDomain and older clients give the host alone.
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(prefix) ? prefix : `https://${prefix}`;
    const trimmed = withScheme.replace(/\/+$/, '');
    if (trimmed === defaultPrefix) return null;
    let url: URL | undefined;
    try {
      url = new URL(trimmed);
    } catch {}
    const domain =
      url &&
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      url.pathname === '/' &&
      !url.search &&
      !url.port &&
      !url.username &&
      !url.password
        ? await deps.domains.findActive(principal.userId, url.hostname)
        : undefined;
    if (!domain)
      throw invalidRequest(`${field} is not a short link domain of yours`, [
        { field, message: `must be ${defaultPrefix} or https:// and one of your active custom domains` },
      ]);
    return domain.id;
  }

  /** The parameters and domain of a request, from dynamicLinkInfo or from longDynamicLink. */
  function readRequest(body: CreateShortLinkBody): ShortLinkRequest {
    if (body.dynamicLinkInfo) {
      const info = body.dynamicLinkInfo;
      const flattened = dynamicLinkParamsFromInfo(info);
      if (!flattened) throw invalidRequest('dynamicLinkInfo.link is required', [{ field: 'dynamicLinkInfo.link', message: 'is required' }]);
      return {
        params: flattened.params,
        prefix: info.domainUriPrefix || info.dynamicLinkDomain || undefined,
        prefixField: info.domainUriPrefix ? 'dynamicLinkInfo.domainUriPrefix' : 'dynamicLinkInfo.dynamicLinkDomain',
        fieldOf: (param) => DYNAMIC_LINK_INFO_FIELDS[param],
        ignored: flattened.ignored,
      };
    }
    const field = 'longDynamicLink';
    let url: URL | undefined;
    try {
      url = new URL(body.longDynamicLink!);
    } catch {}
    if (!url)
      throw invalidRequest('longDynamicLink is not a URL', [{ field, message: 'must be an absolute URL: https://your.domain/?link=…' }]);
    const params = longLinkParams(url.searchParams);
    if (!params) throw invalidRequest('longDynamicLink has no link parameter', [{ field, message: 'must carry the deep link in ?link=' }]);
    return {
      params,
      prefix: `${url.origin}${url.pathname}`,
      prefixField: field,
      fieldOf: (param) => `${field}.${param}`,
      ignored: [],
    };
  }

  /** The caller's link at a short URL (the default domain's or a custom one's); 404 for any other. */
  async function findOwned(principal: Principal, shortLink: string) {
    const missing = () => notFound(`${shortLink} is not a short link of yours`);
    let url: URL;
    try {
      url = new URL(shortLink);
    } catch {
      throw missing();
    }
    const address = `${url.origin}${url.pathname}`;
    const onDefault = address.startsWith(`${defaultPrefix}/`);
    const code = onDefault ? address.slice(defaultPrefix.length + 1) : url.pathname.slice(1);
    if (!/^[A-Za-z0-9_-]+$/.test(code)) throw missing();
    const link = await deps.links.findByCode(code, onDefault ? undefined : url.hostname);
    if (!link || link.userId !== principal.userId) throw missing();
    return link;
  }

  return {
    /**
     * The short link of an FDL link's parameters on the caller's domain: the one made before for
     * the same parameters and suffix option, or a new one. Warnings say what does not apply here.
     */
    async createShortLink(principal: Principal, body: CreateShortLinkBody): Promise<CreateShortLinkResponse> {
      const request = readRequest(body);
      const domainId = await domainIdOf(principal, request.prefix, request.prefixField);
      const option = body.suffix?.option === 'SHORT' ? 'SHORT' : 'UNGUESSABLE';
      const result = await findOrCreateDynamicLink(
        {
          sql: deps.sql,
          redis: deps.redis,
          keys: deps.keys,
          onCacheError: (error, link) =>
            deps.log.warn({ err: error, code: link.code }, 'link cache write failed; the reconcile task will repair it'),
        },
        {
          userId: principal.userId,
          domainId,
          params: request.params,
          makeCode: option === 'SHORT' ? shortCode : unguessableCode,
          variant: option,
          maxDestinationBytes: deps.maxDestinationBytes,
        },
      );
      if (!result.ok) {
        const details: ErrorDetail[] = result.errors.map(({ param, message }) => ({ field: request.fieldOf(param), message }));
        throw invalidRequest('The dynamic link is not valid', details);
      }
      const link = shortUrl(result.link.code, result.link.domain);
      return {
        shortLink: link,
        previewLink: `${link}?d=1`,
        warning: [
          ...request.ignored.map(({ field, message }) => ({ warningCode: 'UNRECOGNIZED_PARAM', warningMessage: `${field}: ${message}` })),
          ...result.warnings.map(({ param, message }) => ({
            warningCode: WARNING_CODES[param] ?? 'UNRECOGNIZED_PARAM',
            warningMessage: `${request.fieldOf(param)}: ${message}`,
          })),
        ],
      };
    },

    /**
     * Clicks, store redirects, installs, first opens and re-opens of the caller's short link per
     * platform over the last `durationDays` days (to the end of the current hour, the rollups'
     * grain); events that did not happen are left out, as FDL left them out. Another account's
     * link is answered as an unknown one.
     */
    async linkStats(principal: Principal, shortLink: string, durationDays: number): Promise<LinkStatsResponse> {
      const link = await findOwned(principal, shortLink);
      const end = Math.ceil(now() / HOUR) * HOUR;
      const range = { start: new Date(end - durationDays * DAY), end: new Date(end), timeBucket: 'month' as const };
      const report = await deps.analytics.linkReport(link.id, range, ['platform']);
      const { counts } = appFunnel(report.dimensions, report.appEvents);
      return {
        linkEventStats: LINK_STAT_EVENTS.flatMap((event) =>
          LINK_STAT_PLATFORMS.flatMap((platform) => {
            const count = counts[event][platform];
            return count > 0 ? [{ platform, count: String(count), event }] : [];
          }),
        ),
      };
    },
  };
}
export type FirebaseRestService = ReturnType<typeof firebaseRestService>;
