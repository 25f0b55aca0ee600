import { createHash, randomBytes } from 'node:crypto';
import { BoundedMap } from '@deeplink/core';
import jwt from 'jsonwebtoken';

/** API keys start with this, so they are recognisable in configs and secret scanners. */
export const API_KEY_PREFIX = 'dlk_';

/** A new API key: the prefix plus 32 random bytes in base64url (256 bits of entropy). */
export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(32).toString('base64url');

/** Keys are stored and looked up by SHA-256 only; a fast hash is right for 256-bit random secrets. */
export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key).digest();

export const looksLikeApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

/**
 * App keys start with this: publishable keys shipped inside apps, good for the app endpoints only.
 * Not `dlk_`, so an app key sent as a Bearer credential is never taken for an API key: it fails
 * like any invalid token.
 */
export const APP_KEY_PREFIX = 'dla_';

/** A new app key: the prefix plus 32 random bytes in base64url, hashed with hashApiKey like an API key. */
export const generateAppKey = (): string => APP_KEY_PREFIX + randomBytes(32).toString('base64url');

/** Characters of a new key kept in clear for lists: the 4-character prefix and 8 of its 43 random ones (48 of 256 bits). */
export const SHOWN_KEY_PREFIX_LENGTH = 12;

/** Signs a login token (HS256) carrying the user id as `sub` and the user's token version as `ver`. */
export function signAccessToken(userId: string, version: number, secret: string, ttlSeconds: number): string {
  return jwt.sign({ ver: version }, secret, { algorithm: 'HS256', subject: userId, expiresIn: ttlSeconds });
}

/** What a valid login token says: whose it is and which of the user's token versions it belongs to. */
export interface TokenClaims {
  userId: string;
  version: number;
}

/** The claims of a valid, unexpired token, or undefined. Only HS256 is accepted. */
export function verifyAccessToken(token: string, secret: string, now = Date.now()): (TokenClaims & { expiresAtMs: number }) | undefined {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'], clockTimestamp: Math.floor(now / 1000) });
    if (typeof payload !== 'object' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return undefined;
    // Tokens from before versions existed carry none: version 0, which the first revocation ends.
    return { userId: payload.sub, version: typeof payload.ver === 'number' ? payload.ver : 0, expiresAtMs: payload.exp * 1000 };
  } catch {
    return undefined;
  }
}

/** Distinct valid tokens one process remembers (the newest half at least): a few hundred bytes each, so at most a few MB. */
export const VERIFIED_TOKENS_MAX = 10_000;

/**
 * verifyAccessToken with a memory: each distinct valid token is verified once per process and then
 * answered from a bounded map until its `exp`. An HMAC check costs about a quarter of a millisecond,
 * more than the rest of a cached read; a signature that was valid stays valid, so only expiry needs
 * checking again. Revocation is not decided here (see accounts.ts). Invalid tokens are not
 * remembered: the credential-failure limit stops an address that keeps sending them.
 */
export function tokenVerifier(secret: string, options: { max?: number; now?: () => number } = {}) {
  const max = options.max ?? VERIFIED_TOKENS_MAX;
  const now = options.now ?? Date.now;
  const verified = new BoundedMap<string, TokenClaims & { expiresAtMs: number }>(max);
  return {
    verify(token: string): TokenClaims | undefined {
      const at = now();
      const known = verified.get(token);
      if (known && known.expiresAtMs > at) return known;
      if (known) verified.delete(token);
      const claims = verifyAccessToken(token, secret, at);
      if (!claims) return undefined;
      verified.set(token, claims);
      return claims;
    },
    /** Whether the token's claims are remembered (it was verified before and has not expired). */
    knows(token: string): boolean {
      return (verified.get(token)?.expiresAtMs ?? 0) > now();
    },
  };
}
export type TokenVerifier = ReturnType<typeof tokenVerifier>;
