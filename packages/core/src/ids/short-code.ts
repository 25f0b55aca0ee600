import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 62 * 4 = 248: bytes at or above it are rejected so every character is equally likely.
const UNBIASED_LIMIT = 248;

/** A random base62 short code (7 characters by default: 62^7 ≈ 3.5 trillion codes). */
export function generateShortCode(length = 7): string {
  let code = '';
  while (code.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_LIMIT) code += ALPHABET[byte % 62];
      if (code.length === length) break;
    }
  }
  return code;
}
