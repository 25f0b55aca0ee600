import { createHmac } from 'node:crypto';
import { isUuid, type ClickEvent } from '@deeplink/core';
import type { RollupClick } from '@deeplink/core/db/rollups-repository';
import type { GeoIp } from './geoip.js';
import type { UserAgentInfo } from './user-agent.js';

const HOUR_MS = 3_600_000;
const MAX_HOST_LENGTH = 253;
// The largest time a Date can hold; anything outside 1970..then is not a real click.
const MAX_TIMESTAMP = 8.64e15;

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

/** Host of the Referer header, lower-cased; `direct` when there is none or it is not a URL. */
export function referrerHost(referrer: string): string {
  if (!referrer) return 'direct';
  try {
    return new URL(referrer).hostname.toLowerCase().slice(0, MAX_HOST_LENGTH) || 'direct';
  } catch {
    return 'direct';
  }
}

/**
 * Turns a raw click into its rollup fields. Returns undefined for clicks that are not counted:
 * bots, and malformed events (a link id that is not a UUID, a timestamp that is not a time).
 */
export function createClickEnricher({ geoip, parseUserAgent, visitorSalt }: ClickEnricherDeps) {
  return (click: ClickEvent): EnrichedClick | undefined => {
    if (typeof click.linkId !== 'string' || !isUuid(click.linkId) || !(click.ts >= 0 && click.ts <= MAX_TIMESTAMP)) return undefined;
    const ip = typeof click.ip === 'string' ? click.ip : '';
    const userAgent = typeof click.userAgent === 'string' ? click.userAgent : '';
    const agent = parseUserAgent(userAgent);
    if (agent.bot) return undefined;
    return {
      linkId: click.linkId.toLowerCase(),
      bucket: Math.floor(click.ts / HOUR_MS) * HOUR_MS,
      visitor: createHmac('sha256', visitorSalt).update(`${ip}\n${userAgent}`).digest('base64url'),
      dimensions: {
        platform: agent.platform,
        country: geoip.country(ip),
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
        referrer: referrerHost(typeof click.referrer === 'string' ? click.referrer : ''),
      },
    };
  };
}
export type ClickEnricher = ReturnType<typeof createClickEnricher>;
