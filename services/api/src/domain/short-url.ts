/** What a short URL is made of: the code, and the custom domain's hostname (null on the default domain). */
export interface ShortUrlParts {
  code: string;
  domain: string | null;
}

/**
 * The short URL of a link, on its custom domain or on SHORT_URL_BASE. The same code may exist on
 * several domains (another account's link, even), so the domain is never left out.
 */
export function shortUrlOf(shortUrlBase: string): (link: ShortUrlParts) => string {
  const base = shortUrlBase.replace(/\/+$/, '');
  // Custom domains are served on SHORT_URL_BASE's scheme (https in production).
  const { protocol } = new URL(shortUrlBase);
  return (link) => (link.domain ? `${protocol}//${link.domain}/${link.code}` : `${base}/${link.code}`);
}
