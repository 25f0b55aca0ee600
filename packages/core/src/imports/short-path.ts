import { slugSchema } from '../schemas/links.js';

export type ShortPath = { ok: true; code: string } | { ok: false; message: string };

/** `host.tld/path…` without a scheme, as Bitly's ids are written (`bit.ly/3xYz`). */
const BARE_HOST_PATH = /^[a-z0-9-]+(\.[a-z0-9-]+)+\//i;

/**
 * The short code of an exported link: its path, whether the column holds the whole short URL
 * (`https://example.page.link/abc`), a URL without its scheme (`bit.ly/abc`) or the path alone. The
 * path must be one segment that a code of this service can be (3-64 letters, digits, `-` or `_`,
 * not a reserved word): links under a path prefix cannot keep their URL here.
 */
export function shortPathCode(value: string): ShortPath {
  const text = value.trim();
  if (text === '') return { ok: false, message: 'is empty' };
  let path = text;
  if (/^https?:\/\//i.test(text) || BARE_HOST_PATH.test(text)) {
    try {
      path = new URL(/^https?:\/\//i.test(text) ? text : `https://${text}`).pathname;
    } catch {
      return { ok: false, message: 'is not a URL or a path' };
    }
  }
  path = path.replace(/^\//, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return { ok: false, message: `has a path that cannot be a code: ${path}` };
  }
  if (decoded.includes('/')) return { ok: false, message: `has a path of several segments (${decoded}), which cannot be a code` };
  const slug = slugSchema.safeParse(decoded);
  if (!slug.success) return { ok: false, message: `has a path that cannot be a code (${decoded}): it ${slug.error.issues[0]!.message}` };
  return { ok: true, code: slug.data };
}
