import { isIP } from 'node:net';
import { isDomainHostname } from '@deeplink/core';

/** Distinct Host headers remembered; past it the memo starts again (a scan of made-up hosts). */
const MEMO_MAX = 1_000;
/** The longest Host that can name a domain: 253 characters, a trailing dot, and `:` with a port. */
const MAX_HOST_CHARS = 253 + 1 + 6;
const PORT = /^\d{0,5}$/;

/**
 * Tells the custom domain a Host header names. The default domain is SHORT_URL_BASE's hostname,
 * plus any IP address and localhost (direct access: health checks, a load balancer, a benchmark),
 * since a custom domain is always a name. The answer per distinct header is remembered, so a
 * request costs one comparison (the default's own header), or a length check and one Map lookup.
 */
export function createHostnames(shortUrlBase: string) {
  const base = new URL(shortUrlBase);
  const defaultHost = base.host;
  const defaultHostname = base.hostname.toLowerCase();
  const memo = new Map<string, string | null>();

  /** [v6]:port, name:port, or a bare name; a trailing dot names the same host. */
  const normalise = (host: string): string | null => {
    if (host.startsWith('[')) {
      const bracket = host.indexOf(']');
      const port = host.slice(bracket + 1);
      const valid =
        bracket > 0 && isIP(host.slice(1, bracket)) === 6 && (port === '' || (port.startsWith(':') && PORT.test(port.slice(1))));
      return valid ? '' : null;
    }
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !PORT.test(host.slice(colon + 1))) return null;
    const name = (colon >= 0 ? host.slice(0, colon) : host).toLowerCase().replace(/\.$/, '');
    if (name === '' || name === defaultHostname || name === 'localhost' || isIP(name) !== 0) return '';
    return isDomainHostname(name) ? name : null;
  };

  return {
    /**
     * The custom hostname of a Host header, '' for the default domain (also when there is no Host),
     * or null for a Host no domain can have (too long, a bad label or character, one label, a bad
     * port): such a request is refused before any lookup, and the header is not remembered whole.
     */
    custom(host: string): string | null {
      if (host === defaultHost) return '';
      if (host.length > MAX_HOST_CHARS) return null;
      let name = memo.get(host);
      if (name === undefined) {
        if (memo.size >= MEMO_MAX) memo.clear();
        memo.set(host, (name = normalise(host)));
      }
      return name;
    },
  };
}
