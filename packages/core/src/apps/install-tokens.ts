import { createHash, randomFillSync } from 'node:crypto';
import type { AppEventPlatform } from '../queue/app-events.js';

/**
 * Install tokens: what carries a visit across an app's install. The redirector hands one out with
 * every visit it sends to an app store (in the Play Store URL's `referrer` on Android, in the URL
 * the iOS page copies to the pasteboard), the worker stores its hash with the link, and the app's
 * first launch hands it back (POST /api/app/install) to learn which link brought it.
 */

/** The query parameter (in a Play `referrer`, or in the URL on the iOS pasteboard) that holds the token. */
export const INSTALL_TOKEN_PARAM = 'dl_token';

/** 16 random bytes as base64url: 22 characters no URL or referrer needs to escape. */
export const INSTALL_TOKEN_LENGTH = 22;
const TOKEN_BYTES = 16;

/**
 * How long a token can be claimed, by the platform it was handed out on. Google Play keeps an
 * install referrer for 90 days after the store visit, so an Android token lives as long. The iOS
 * pasteboard is read at the first launch right after the install, and anything copied later
 * replaces it: a week covers an install the visitor put off, without keeping tokens for months.
 */
export const INSTALL_TOKEN_TTL_DAYS: Readonly<Record<'ANDROID' | 'IOS', number>> = { ANDROID: 90, IOS: 7 };

/** Whether a store REDIRECT on `platform` hands out a token (the two platforms with an app store). */
export const takesInstallToken = (platform: AppEventPlatform): platform is 'ANDROID' | 'IOS' =>
  platform === 'ANDROID' || platform === 'IOS';

// One call to the system's random source per 256 tokens: minting one is on the redirect path.
const POOL_TOKENS = 256;
const pool = Buffer.alloc(TOKEN_BYTES * POOL_TOKENS);
let next = POOL_TOKENS;

/** A new token: 128 random bits, base64url. */
export function newInstallToken(): string {
  if (next === POOL_TOKENS) {
    randomFillSync(pool);
    next = 0;
  }
  const start = TOKEN_BYTES * next++;
  return pool.toString('base64url', start, start + TOKEN_BYTES);
}

/** What is stored of a token: its SHA-256. A token is random, so no salt is needed to keep it unguessable. */
export const hashInstallToken = (token: string): Buffer => createHash('sha256').update(token).digest();

// `dl_token=<token>` as a parameter of a query or of a Play referrer, whether the text holds it as
// is or URL-encoded once or twice (a referrer is itself a parameter of the Play URL).
const TOKEN_IN_TEXT = new RegExp(
  `(?:^|[?&#]|%26|%3F|%2526|%253F)${INSTALL_TOKEN_PARAM}(?:=|%3D|%253D)([A-Za-z0-9_-]{${INSTALL_TOKEN_LENGTH}})(?![A-Za-z0-9_-])`,
  'i',
);

/** The token a Play install referrer or a pasteboard URL holds, or undefined when it holds none. */
export function findInstallToken(text: string): string | undefined {
  return TOKEN_IN_TEXT.exec(text)?.[1];
}
