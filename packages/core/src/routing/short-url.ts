/**
 * The short URLs of links: SHORT_URL_BASE and the code on the default domain, the domain and the
 * code on a custom one, served on SHORT_URL_BASE's scheme (https in production).
 */
export function shortUrls(shortUrlBase: string): (code: string, hostname?: string | null) => string {
  const base = shortUrlBase.replace(/\/+$/, '');
  const { protocol } = new URL(shortUrlBase);
  return (code, hostname) => (hostname ? `${protocol}//${hostname}/${code}` : `${base}/${code}`);
}
