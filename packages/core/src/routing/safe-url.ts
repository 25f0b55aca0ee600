/** Schemes that run code or read local files; never a destination, whatever the cache says. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:']);

// A Location header or an attribute must not carry raw control characters (header splitting).
const CONTROL = /[\u0000-\u001f\u007f]/;

function parse(value: string | undefined): URL | undefined {
  if (!value || CONTROL.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** Parses an absolute http(s) URL, or returns undefined for anything else. */
export function parseWebUrl(value: string | undefined): URL | undefined {
  const url = parse(value);
  return url && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : undefined;
}

/** Parses an app deep link of any scheme except the forbidden ones, or returns undefined. */
export function parseAppUrl(value: string | undefined): URL | undefined {
  const url = parse(value);
  return url && !FORBIDDEN_SCHEMES.has(url.protocol) ? url : undefined;
}
