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

/** A URL string: trimmed, without control characters, at most MAX_URL_BYTES once percent-encoded. */
const urlText = () =>
  z
    .string()
    .trim()
    .max(MAX_URL_BYTES, `must be at most ${MAX_URL_BYTES} characters`)
    .refine((v) => !hasControlCharacters(v), 'must not contain control characters (tab, CR, LF…)')
    .refine((v) => Buffer.byteLength(parseUrl(v)?.href ?? v) <= MAX_URL_BYTES, `must be at most ${MAX_URL_BYTES} bytes once percent-encoded`);

/** ISO 8601 dates as the API reads them: years 0001-9999 only (PostgreSQL and JSON agree on those). */
export const isoDateTimeOrDate = (message: string) =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: message })
    .refine((value) => {
      const year = Number(value.slice(0, 4));
      return year >= 1 && year <= 9999 && !Number.isNaN(new Date(value).getTime());
    }, 'must be a date between the years 0001 and 9999');

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
    return [{ field: base || '(body)', message: issue.message }];
  });
}
