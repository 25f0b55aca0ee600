import * as crypto from 'node:crypto';
import { type AppEvent, BoundedMap, type ClickEvent, isPreviewCrawler, isUuid } from '@deeplink/core';
import type { RollupAppEvent, RollupClick, RollupPreview } from '@deeplink/core/db';
import type { GeoIp } from './geoip.js';
import type { UserAgentInfo } from './user-agent.js';

const HOUR_MS = 3_600_000;
const MAX_HOST_LENGTH = 253;
// The largest time a Date can hold; anything outside 1970..then is not a real click.
const MAX_TIMESTAMP = 8.64e15;
// Referrer hosts are remembered per distinct Referer: browsers send just the origin of most
// cross-site referrers, so a few strings come back all the time, and a URL parse costs several
// microseconds. Longer referrers (full URLs with paths and queries) are parsed without being cached.
const REFERRER_CACHE_SIZE = 20_000;
const MAX_CACHED_REFERRER_LENGTH = 256;

/**
 * A click reduced to what the rollups store: no address, no agent string, no full referrer. The
 * visitor is an HMAC of address and agent, which counts unique visitors without keeping either.
 */
export type EnrichedClick = RollupClick;

export interface ClickEnricherDeps {
  geoip: GeoIp;
  parseUserAgent: (userAgent: string) => UserAgentInfo;
  visitorSalt: string;
}

// SHA-256's block size: HMAC pads its key to one block.
const SHA256_BLOCK = 64;
// Node 20.12+; older versions compute the same HMAC with createHmac.
const oneShotHash: typeof crypto.hash | undefined = typeof crypto.hash === 'function' ? crypto.hash : undefined;

/**
 * HMAC-SHA256(salt, `${ip}\n${userAgent}`) as base64url: the value `createHmac` gives, computed
 * as RFC 2104 defines it, SHA-256((K ⊕ opad) ‖ SHA-256((K ⊕ ipad) ‖ message)), with the two pads
 * worked out once and two one-shot `crypto.hash` calls per click. A fresh createHmac object per
 * click costs about twice as much CPU, for the same bytes. `crypto.hash` encodes a string input as
 * UTF-8, so the inner pad can lead the string only if it is ASCII, that is if the key is: a salt with
 * other characters, or longer than a block (HMAC hashes such keys first), keeps using createHmac.
 */
export function createVisitorHash(salt: string): (ip: string, userAgent: string) => string {
  const key = Buffer.from(salt, 'utf8');
  if (!oneShotHash || key.length > SHA256_BLOCK || key.some((byte) => byte >= 0x80)) {
    return (ip, userAgent) => crypto.createHmac('sha256', salt).update(`${ip}\n${userAgent}`).digest('base64url');
  }
  const hash = oneShotHash;
  const innerPad = Buffer.alloc(SHA256_BLOCK, 0x36);
  const outer = Buffer.alloc(SHA256_BLOCK + 32, 0x5c);
  for (let i = 0; i < key.length; i++) {
    innerPad[i]! ^= key[i]!;
    outer[i]! ^= key[i]!;
  }
  const innerPadText = innerPad.toString('latin1'); // ASCII, so the same 64 bytes in UTF-8
  return (ip, userAgent) => {
    // The inner digest's 32 bytes as latin1 ('binary') characters, one per byte, after the outer pad.
    outer.write(hash('sha256', `${innerPadText}${ip}\n${userAgent}`, 'binary'), SHA256_BLOCK, 'latin1');
    return hash('sha256', outer, 'base64url');
  };
}

/**
 * The visitor hash of a click as the rollups count it (createVisitorHash of its address and agent,
 * '' for either when missing): the click's own, and its store REDIRECT's.
 */
export function createClickVisitor(visitorSalt: string): (click: ClickEvent) => string {
  const visitorHash = createVisitorHash(visitorSalt);
  return (click) => visitorHash(typeof click.ip === 'string' ? click.ip : '', typeof click.userAgent === 'string' ? click.userAgent : '');
}

/** Host of the Referer header, lower-cased; `direct` when there is none or it is not a URL. */
export function referrerHost(referrer: string): string {
  if (!referrer) return 'direct';
  try {
    return new URL(referrer).hostname.toLowerCase().slice(0, MAX_HOST_LENGTH) || 'direct';
  } catch {
    return 'direct';
  }
}

/** referrerHost, remembered in `cache` for referrers up to MAX_CACHED_REFERRER_LENGTH characters. */
export function cachedReferrerHost(cache = new BoundedMap<string, string>(REFERRER_CACHE_SIZE)): (referrer: string) => string {
  return (referrer) => (referrer.length > MAX_CACHED_REFERRER_LENGTH ? referrerHost(referrer) : cache.remember(referrer, referrerHost));
}

/** True for an event the rollups can place: a UUID link id and a real time. */
const wellFormed = (click: Pick<ClickEvent, 'linkId' | 'ts'>): boolean =>
  typeof click.linkId === 'string' && isUuid(click.linkId) && click.ts >= 0 && click.ts <= MAX_TIMESTAMP;

/** The longest app event id recorded; an API open's is a 64-character hash. */
const MAX_EVENT_ID_LENGTH = 200;
/** The longest visitor fed to a sketch as it is; the API's are 43-character hashes. */
const MAX_VISITOR_LENGTH = 200;

/**
 * A value the unique-count sketches can take as one visitor: as it is when it holds no space (the
 * repository joins a row's visitors with spaces) and no NUL (PostgreSQL text cannot hold it) and is
 * short, else its SHA-256: still one visitor, the same one each time.
 */
const sketchable = (value: string): string =>
  value.length <= MAX_VISITOR_LENGTH && !value.includes(' ') && !value.includes('\u0000')
    ? value
    : crypto.createHash('sha256').update(value).digest('base64url');

/**
 * An app event's rollup fields, or undefined for one the rollups cannot place (a link id that is
 * not a UUID, a time that is not one, an id PostgreSQL cannot hold). A REDIRECT came with its click
 * and counts once with the batch; any other event is counted once by its own id. Its visitor, for
 * the unique counts, is the one it carries (an install's hash), else `clickVisitor` (a REDIRECT's
 * click's), else its own id (an open that named no install: each open is one).
 */
export function appEventOf(event: AppEvent, clickVisitor?: string): RollupAppEvent | undefined {
  if (!wellFormed(event) || event.eventId.length > MAX_EVENT_ID_LENGTH || event.eventId.includes('\u0000')) return undefined;
  const carried = typeof event.visitor === 'string' && event.visitor !== '' ? event.visitor : undefined;
  const placed = {
    linkId: event.linkId.toLowerCase(),
    bucket: Math.floor(event.ts / HOUR_MS) * HOUR_MS,
    name: event.name,
    platform: event.platform,
    visitor: sketchable(carried ?? clickVisitor ?? event.eventId),
  };
  return event.name === 'REDIRECT' ? placed : { ...placed, eventId: event.eventId };
}

/**
 * A link-preview crawler's visit (see preview-crawlers.ts), to be counted as a preview; undefined
 * for any other event.
 */
export function previewOf(click: ClickEvent): RollupPreview | undefined {
  if (!wellFormed(click) || typeof click.userAgent !== 'string' || !isPreviewCrawler(click.userAgent)) return undefined;
  return { linkId: click.linkId.toLowerCase(), bucket: Math.floor(click.ts / HOUR_MS) * HOUR_MS };
}

/**
 * Turns a raw click into its rollup fields. Returns undefined for clicks that are not counted:
 * bots (link-preview crawlers among them, counted by previewOf instead), and malformed events (a
 * link id that is not a UUID, a timestamp that is not a time).
 */
export function createClickEnricher({ geoip, parseUserAgent, visitorSalt }: ClickEnricherDeps) {
  const visitorHash = createVisitorHash(visitorSalt);
  const hostOf = cachedReferrerHost();
  return (click: ClickEvent): EnrichedClick | undefined => {
    if (!wellFormed(click)) return undefined;
    const ip = typeof click.ip === 'string' ? click.ip : '';
    const userAgent = typeof click.userAgent === 'string' ? click.userAgent : '';
    // Some crawlers (WhatsApp, Mastodon) are not bots to the agent parser, but never clicks.
    if (isPreviewCrawler(userAgent)) return undefined;
    const agent = parseUserAgent(userAgent);
    if (agent.bot) return undefined;
    return {
      linkId: click.linkId.toLowerCase(),
      bucket: Math.floor(click.ts / HOUR_MS) * HOUR_MS,
      visitor: visitorHash(ip, userAgent),
      dimensions: {
        platform: agent.platform,
        country: geoip.country(ip),
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
        referrer: typeof click.referrer === 'string' && click.referrer ? hostOf(click.referrer) : 'direct',
      },
    };
  };
}
export type ClickEnricher = ReturnType<typeof createClickEnricher>;
