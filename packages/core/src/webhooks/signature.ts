import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The header every delivery carries: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, one v1 per signing secret. */
export const WEBHOOK_SIGNATURE_HEADER = 'Webhook-Signature';
/** How far a signature's time may lie from the receiver's clock before it is refused (the docs' example uses it too). */
export const WEBHOOK_SIGNATURE_TOLERANCE_SECONDS = 5 * 60;
/** What every secret starts with, so one is recognised in a config file or a leak report. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, base64url, after the prefix. */
export const generateWebhookSecret = (): string => `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

const hmac = (secret: string, timestamp: number, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/**
 * The signature header's value for `body` sent at `timestamp` (Unix seconds): one v1 entry per
 * secret, so during a rotation a receiver holding either the old or the new secret accepts it.
 */
export function signWebhook(body: string, secrets: readonly string[], timestamp: number): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmac(secret, timestamp, body)}`)].join(',');
}

/**
 * Whether `header` signs `body` with `secret` within `toleranceSeconds` of `nowSeconds`: what a
 * receiver does (docs/webhooks.md shows the same in plain Node).
 */
export function verifyWebhookSignature(
  header: string,
  body: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = WEBHOOK_SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, body));
  return parts.some(
    ([key, value]) =>
      key === 'v1' && value !== undefined && value.length === expected.length && timingSafeEqual(Buffer.from(value), expected),
  );
}
