// A link's name in the Redis link cache and in the redirector's in-process copy. It lives below
// both the database and the Redis layer: the repository answers with cache ids of deleted links,
// the cache writes keys by them, and neither has to reach into the other for it.

/**
 * A link's name in the caches: its code on the default domain, `hostname/code` on a custom domain
 * (a code never holds a slash, so the two cannot meet).
 */
export const linkCacheId = (code: string, hostname?: string | null): string => (hostname ? `${hostname}/${code}` : code);

/** The code and (on a custom domain) hostname a cache id names. */
export function parseLinkCacheId(id: string): { code: string; hostname?: string } {
  const slash = id.lastIndexOf('/');
  return slash === -1 ? { code: id } : { code: id.slice(slash + 1), hostname: id.slice(0, slash) };
}
