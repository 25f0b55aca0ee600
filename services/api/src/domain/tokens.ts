import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';

/** API keys start with this, so they are recognisable in configs and secret scanners. */
export const API_KEY_PREFIX = 'dlk_';

/** A new API key: the prefix plus 32 random bytes in base64url (256 bits of entropy). */
export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(32).toString('base64url');

/** Keys are stored and looked up by SHA-256 only; a fast hash is right for 256-bit random secrets. */
export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key).digest();

export const looksLikeApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

/** Signs a login token (HS256) carrying the user id as `sub` and the user's token version as `ver`. */
export function signAccessToken(userId: string, version: number, secret: string, ttlSeconds: number): string {
  return jwt.sign({ ver: version }, secret, { algorithm: 'HS256', subject: userId, expiresIn: ttlSeconds });
}

/** The claims of a valid, unexpired token, or undefined. Only HS256 is accepted. */
export function verifyAccessToken(token: string, secret: string): { userId: string; version: number } | undefined {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'] });
    if (typeof payload !== 'object' || typeof payload.sub !== 'string') return undefined;
    // Tokens from before versions existed carry none: version 0, which the first revocation ends.
    return { userId: payload.sub, version: typeof payload.ver === 'number' ? payload.ver : 0 };
  } catch {
    return undefined;
  }
}
