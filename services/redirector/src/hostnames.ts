import { isIP } from 'node:net';

/** Distinct Host headers remembered; past it the memo starts again (a scan of made-up hosts). */
const MEMO_MAX = 1_000;

/**
 * Tells the custom domain a Host header names. The default domain is SHORT_URL_BASE's hostname,
 * plus any IP address and localhost (direct access: health checks, a load balancer, a benchmark),
 * since a custom domain is always a name. The answer per distinct header is remembered, so a
 * request costs one comparison (the default's own header) or one Map lookup.
 */
export function createHostnames(shortUrlBase: string) {
  const base = new URL(shortUrlBase);
  const defaultHost = base.host;
  const defaultHostname = base.hostname.toLowerCase();
  const memo = new Map<string, string>();

  const normalise = (host: string): string => {
    // [v6]:port, name:port, or a bare name; a trailing dot names the same host.
    const bracket = host.startsWith('[') ? host.indexOf(']') : -1;
    const colon = bracket >= 0 ? -1 : host.lastIndexOf(':');
    const name = (bracket >= 0 ? host.slice(1, bracket) : colon >= 0 ? host.slice(0, colon) : host).toLowerCase().replace(/\.$/, '');
    return name === '' || name === defaultHostname || name === 'localhost' || isIP(name) !== 0 ? '' : name;
  };

  return {
    /** The custom hostname of a Host header, or '' for the default domain (also when there is no Host). */
    custom(host: string): string {
      if (host === defaultHost) return '';
      let name = memo.get(host);
      if (name === undefined) {
        if (memo.size >= MEMO_MAX) memo.clear();
        memo.set(host, (name = normalise(host)));
      }
      return name;
    },
  };
}
