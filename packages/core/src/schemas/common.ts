import { z } from 'zod';
import { ErrorCode } from '../errors.js';

/** `{ success: true, data }`: the envelope of every successful response. */
export const successEnvelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

export const errorDetailSchema = z.object({ field: z.string(), message: z.string() });

/** `{ success: false, error }`: the envelope of every failure. */
export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.array(errorDetailSchema),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

export const nullDataSchema = successEnvelope(z.null());

/** ISO 8601 timestamp in UTC with millisecond precision, as every response writes them. */
export const timestampSchema = z.iso.datetime().meta({ example: '2026-11-22T10:15:30.000Z' });

/** Schemes that must never be a redirect target: they run code or read local files. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:']);

const parseUrl = (value: string): URL | undefined => {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
};

/** The longest URL accepted, in bytes as it is sent (percent-encoded); also the limit of a destination with its parameters. */
export const MAX_URL_BYTES = 2048;

/** Tab, CR, LF and the other control characters: a URL parser drops them silently, so they are refused. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
export const hasControlCharacters = (value: string): boolean => CONTROL_CHARACTERS.test(value);

/** A UTF-16 surrogate outside a pair: with the `u` flag a pair is one code point and does not match. */
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u;
/** True when `value` has a UTF-8 form: JSON can carry unpaired surrogates, UTF-8 (PostgreSQL, URLs) cannot. */
export const isWellFormedText = (value: string): boolean => !UNPAIRED_SURROGATE.test(value);
/** Aborts the field's checks: later ones (a query string's length) would throw on such text. */
const WELL_FORMED = { message: 'must be valid Unicode text (no unpaired surrogate)', abort: true } as const;

/**
 * Text a client writes and the service stores: without NUL (PostgreSQL text cannot hold it) and
 * without unpaired surrogates (they have no UTF-8 form, and encodeURIComponent throws on them).
 * Every free-text field starts from this, so such input is a 400 naming the field, never a failed
 * insert. Chain trim/min/max after it.
 */
export const storableText = () =>
  z
    .string()
    .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters')
    .refine(isWellFormedText, WELL_FORMED);

/** A URL string: trimmed, without control characters, at most MAX_URL_BYTES once percent-encoded. */
const urlText = () =>
  z
    .string()
    .trim()
    .max(MAX_URL_BYTES, `must be at most ${MAX_URL_BYTES} characters`)
    .refine((v) => !hasControlCharacters(v), 'must not contain control characters (tab, CR, LF…)')
    .refine(isWellFormedText, WELL_FORMED)
    .refine(
      (v) => Buffer.byteLength(parseUrl(v)?.href ?? v) <= MAX_URL_BYTES,
      `must be at most ${MAX_URL_BYTES} bytes once percent-encoded`,
    );

/** The first and last instants the API accepts or writes: ISO 8601 strings have four-digit years only from 0001 to 9999. */
export const EARLIEST_INSTANT = Date.parse('0001-01-01T00:00:00Z');
export const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * ISO 8601 dates as the API reads them, within the years 0001-9999 as UTC instants too: an offset
 * must not carry `9999-12-31T23:59-14:00` into the year 10000, which no response could write.
 */
export const isoDateTimeOrDate = (message: string) =>
  z.union([z.iso.datetime({ offset: true }), z.iso.date()], { error: message }).refine((value) => {
    const instant = Date.parse(value);
    return instant >= EARLIEST_INSTANT && instant <= LATEST_INSTANT;
  }, 'must be a date between the years 0001 and 9999 (UTC)');

/** An absolute http(s) URL: the only kind a browser destination may be. */
export const webUrlSchema = urlText()
  .refine((v) => {
    const url = parseUrl(v);
    return url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  }, 'must be an absolute http:// or https:// URL')
  .meta({ format: 'uri', example: 'https://example.com/landing' });

/** An app deep link: any scheme (myapp://, https://) except ones that run code or read files. */
export const appUrlSchema = urlText()
  .refine((v) => {
    const url = parseUrl(v);
    return url !== undefined && !FORBIDDEN_SCHEMES.has(url.protocol);
  }, 'must be an absolute URL; javascript:, data:, vbscript:, file: and blob: are not allowed')
  .meta({ example: 'myapp://product/42' });

/** Converts zod issues into the envelope's `details`, with dotted field paths. */
export function toErrorDetails(issues: readonly z.core.$ZodIssue[], prefix = ''): { field: string; message: string }[] {
  return issues.flatMap((issue) => {
    const base = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: base ? `${base}.${key}` : key, message: 'is not a recognised field' }));
    }
    // A record's bad key: say what is wrong with it, not only that it is wrong.
    if (issue.code === 'invalid_key') {
      return issue.issues.map((inner) => ({ field: base || '(body)', message: `name ${inner.message}` }));
    }
    return [{ field: base || '(body)', message: issue.message }];
  });
}
