import { parseWebUrl } from './safe-url.js';

// A custom domain's allowed URL patterns: the destinations its long links may send visitors to
// (Firebase's allow-list). A pattern is a URL with `*` wildcards, never a regular expression: its
// owner writes it, every long link on the domain is matched against it, and a regular expression
// of the owner's could take exponential time. A `*` pattern matches by finding its literal pieces
// in order, each at its leftmost place, which is linear in the URL for each piece.
//
//   https://example.com/*             every URL of example.com
//   https://*.example.com/shop/*      the shop of every subdomain (not example.com itself)
//   https://example.com/p?id=*        one page, any id
//
// The scheme is matched as written. The host (port included) is matched on its own, against the
// parsed URL's, so a `*` there only ever spans host characters: `https://*.example.com/*` cannot
// match `https://evil.test/?.example.com/`. The rest (path, query, fragment) is matched against
// the URL as the WHATWG parser writes it. A URL with a user name or password matches nothing.

/** How many patterns a domain may have, and how long each may be. */
export const MAX_URL_PATTERNS = 50;
export const MAX_URL_PATTERN_CHARS = 500;

const PATTERN = /^(https?):\/\/([a-z0-9*.-]+(?::[0-9*]+)?)(\/[^\s]*)?$/;

/** A pattern split into what each part of a URL is matched against. */
interface CompiledPattern {
  protocol: string;
  host: string[];
  rest: string[];
}

/** Why `pattern` is not one, or undefined when it is. Patterns are lower-cased in their scheme and host. */
export function urlPatternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_URL_PATTERN_CHARS) return `must be at most ${MAX_URL_PATTERN_CHARS} characters`;
  if (!PATTERN.test(normalizeUrlPattern(pattern))) {
    return 'must be an http:// or https:// URL whose host has only letters, digits, ".", "-" and "*" (such as https://*.example.com/*)';
  }
  return undefined;
}

/** `pattern` as stored: scheme and host lower-cased (they are compared as URLs have them), a bare host given the path `/`. */
export function normalizeUrlPattern(pattern: string): string {
  const schemeEnd = pattern.indexOf('://') + 3;
  const pathAt = pattern.indexOf('/', schemeEnd);
  const origin = (pathAt === -1 ? pattern : pattern.slice(0, pathAt)).toLowerCase();
  return `${origin}${pathAt === -1 ? '/' : pattern.slice(pathAt)}`;
}

function compile(pattern: string): CompiledPattern | undefined {
  const match = PATTERN.exec(normalizeUrlPattern(pattern));
  if (match === null) return undefined;
  return { protocol: `${match[1]}:`, host: match[2]!.split('*'), rest: (match[3] ?? '/').split('*') };
}

/**
 * Whether `text` matches the pieces of a pattern split at its `*`s: the first piece starts it, the
 * last ends it, and the others follow in order between them, each found at its leftmost place
 * (which never misses a match: a piece found later leaves less room for the ones after it).
 */
function matchesPieces(text: string, pieces: readonly string[]): boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return text === first;
  const last = pieces[pieces.length - 1]!;
  if (!text.startsWith(first) || text.length < first.length + last.length || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const found = text.indexOf(pieces[i]!, at);
    if (found === -1 || found + pieces[i]!.length > end) return false;
    at = found + pieces[i]!.length;
  }
  return true;
}

/** A test of URLs against a domain's patterns; a URL that is not an absolute http(s) one matches nothing. */
export type UrlAllowList = (url: string) => boolean;

/** The allow-list of `patterns` (as stored: valid, normalized); an invalid one is left out. */
export function compileUrlPatterns(patterns: readonly string[]): UrlAllowList {
  const compiled = patterns.flatMap((pattern) => compile(pattern) ?? []);
  return (value) => {
    const url = parseWebUrl(value);
    if (url === undefined || url.username !== '' || url.password !== '') return false;
    const rest = `${url.pathname}${url.search}${url.hash}`;
    return compiled.some(
      (pattern) => pattern.protocol === url.protocol && matchesPieces(url.host, pattern.host) && matchesPieces(rest, pattern.rest),
    );
  };
}
