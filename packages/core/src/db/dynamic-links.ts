import { dynamicLinkKey } from '../firebase/dynamic-link-key.js';
import {
  type DynamicLinkError,
  type DynamicLinkParams,
  type DynamicLinkWarning,
  linkFieldsFromDynamicLinkParams,
} from '../firebase/dynamic-link-params.js';
import type { LinkFields } from '../schemas/links.js';
import { oversizedDestinations } from '../routing/resolve-destination.js';
import type { RedisClient } from '../redis/client.js';
import type { RedisKeys } from '../redis/keys.js';
import { cacheLink } from '../redis/link-cache.js';
import type { Sql } from './client.js';
import { type LinkRecord, linksRepository, ShortCodeTakenError } from './links-repository.js';

/** Rounds of drawing a code before giving up; each taken code is drawn again with the next attempt number. */
const CODE_ATTEMPTS = 12;

export interface DynamicLinkRequest {
  userId: string;
  /**
   * The custom domain the link lives on, null for the default domain. The caller has checked that
   * it is the user's and active.
   */
  domainId: string | null;
  params: DynamicLinkParams;
  /** Draws a short code for a new link; `attempt` counts taken codes so far, so a drawer may lengthen its codes. */
  makeCode: (attempt: number) => string;
  /** Tells apart links the same parameters may make more than one of (see dynamicLinkKey). */
  variant?: string;
  /** The new link's title (a Takeout row's link name); without one the mapping picks it. */
  title?: string;
  /** MAX_DESTINATION_BYTES: a destination longer than this, its parameters merged, is an error. */
  maxDestinationBytes?: number;
}

export type DynamicLinkResult =
  | { ok: true; link: LinkRecord; created: boolean; warnings: DynamicLinkWarning[] }
  | { ok: false; errors: DynamicLinkError[] };

export interface DynamicLinkDeps {
  sql: Sql;
  redis: RedisClient;
  keys: RedisKeys;
  /** Told when the link cache could not be written; the worker's reconcile task repairs it. */
  onCacheError?: (error: unknown, link: LinkRecord) => void;
}

/** The FDL parameter a destination of the mapped link comes from. */
const DESTINATION_PARAMS = { defaultUrl: 'link', androidLink: 'link', iosLink: 'link', desktopUrl: 'ofl' } as const;

/** Destinations longer than `maxBytes` once their parameters are merged, as errors naming the FDL parameter. */
function destinationErrors(fields: LinkFields, maxBytes: number | undefined): DynamicLinkError[] {
  if (maxBytes === undefined) return [];
  const { expirationDate: _expiry, socialPreview: _preview, ...routing } = fields;
  return oversizedDestinations({ id: '', ...routing }, maxBytes).map(({ field, message }) => ({
    param: DESTINATION_PARAMS[field as keyof typeof DESTINATION_PARAMS] ?? 'link',
    message,
  }));
}

/**
 * The link of an FDL link: the one the user already has for these parameters on that domain, or a
 * new one, made through the one mapping (linkFieldsFromDynamicLinkParams) and written to the link
 * cache as link creation does. Safe against concurrent calls: one insert wins, the others find its
 * link. The warnings are the mapping's, whichever link is answered; errors name the bad parameter.
 */
export async function findOrCreateDynamicLink(deps: DynamicLinkDeps, request: DynamicLinkRequest): Promise<DynamicLinkResult> {
  const mapped = linkFieldsFromDynamicLinkParams(request.params, { title: request.title });
  if (!mapped.ok) return mapped;
  const errors = destinationErrors(mapped.fields, request.maxDestinationBytes);
  if (errors.length > 0) return { ok: false, errors };
  const links = linksRepository(deps.sql);
  const key = dynamicLinkKey(request.params, request.variant);
  for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
    const existing = await links.findByDynamicLinkKey(request.userId, request.domainId, key);
    if (existing) return { ok: true, link: existing, created: false, warnings: mapped.warnings };
    const created = await links.createDynamicLink(request.userId, request.makeCode(attempt), mapped.fields, request.domainId, key);
    if (created) {
      try {
        await cacheLink(deps.redis, deps.keys, created);
      } catch (error) {
        deps.onCacheError?.(error, created);
      }
      return { ok: true, link: created, created: true, warnings: mapped.warnings };
    }
    // Nothing inserted: another call made the key's link meanwhile (found on the next round), or the code was taken.
  }
  throw new ShortCodeTakenError('no free short code');
}
