import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';

/** API keys start with this, so they are recognisable in configs and secret scanners. */
export const API_KEY_PREFIX = 'dlk_';

/** A new API key: the prefix plus 32 random bytes in base64url (256 bits of entropy). */
export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(32).toString('base64url');

/** Keys are stored and looked up by SHA-256 only; a fast hash is right for 256-bit random secrets. */
export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key).digest();

export const looksLikeApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

/** Signs a login token (HS256) carrying the user id as `sub`. */
export function signAccessToken(userId: string, secret: string, ttlSeconds: number): string {
  return jwt.sign({}, secret, { algorithm: 'HS256', subject: userId, expiresIn: ttlSeconds });
}

/** The user id of a valid, unexpired token, or undefined. Only HS256 is accepted. */
export function verifyAccessToken(token: string, secret: string): string | undefined {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'] });
    return typeof payload === 'object' && typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}
