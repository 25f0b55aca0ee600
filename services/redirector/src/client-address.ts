import { isIP } from 'node:net';
import type { HttpResponse } from 'uWebSockets.js';

const decoder = new TextDecoder();

/** The peer address of the connection ('' where the server cannot tell, as on the JS fallback). */
export function socketAddress(res: HttpResponse): string {
  try {
    const text = decoder.decode(res.getRemoteAddressAsText());
    // IPv4 clients on a dual-stack socket show up as IPv4-mapped IPv6.
    return text.startsWith('::ffff:') && text.includes('.') ? text.slice(7) : text;
  } catch {
    return '';
  }
}

/**
 * The visitor's address: the first X-Forwarded-For entry when the proxy in front is trusted
 * (and the entry is an IP address), else the socket peer. Untrusted, the header is ignored.
 * The peer is read only when needed: in uWebSockets.js that read costs about as much as the
 * rest of a cached redirect.
 */
export function clientAddress(res: HttpResponse, forwardedFor: string, trustProxy: boolean): string {
  if (trustProxy && forwardedFor !== '') {
    const comma = forwardedFor.indexOf(',');
    const first = (comma === -1 ? forwardedFor : forwardedFor.slice(0, comma)).trim();
    if (isIP(first) !== 0) return first;
  }
  return socketAddress(res);
}
