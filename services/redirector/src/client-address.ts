import type { HttpResponse } from 'uws-bundled';

/** Distinct IPv4 texts kept for reuse; past this the memo starts over (it only saves work). */
const MAX_MEMO_ENTRIES = 65_536;
const ipv4Texts = new Map<number, string>();

/**
 * An IPv4 address as text. The same string object comes back for the same address, so the click
 * batch's string table finds it without hashing a new string.
 */
function ipv4Text(bytes: Uint8Array, at: number): string {
  const key = ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
  let text = ipv4Texts.get(key);
  if (text === undefined) {
    if (ipv4Texts.size >= MAX_MEMO_ENTRIES) ipv4Texts.clear();
    text = `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`;
    ipv4Texts.set(key, text);
  }
  return text;
}

/** An IPv6 address in RFC 5952 form: lower-case hex, no leading zeros, the longest zero run as `::`. */
function ipv6Text(bytes: Uint8Array): string {
  const groups: string[] = [];
  let bestStart = -1;
  let bestLength = 1; // a single zero group is never shortened
  for (let i = 0, runStart = -1; i < 8; i++) {
    const value = (bytes[2 * i]! << 8) | bytes[2 * i + 1]!;
    groups.push(value.toString(16));
    if (value !== 0) runStart = -1;
    else {
      if (runStart === -1) runStart = i;
      if (i - runStart + 1 > bestLength) [bestStart, bestLength] = [runStart, i - runStart + 1];
    }
  }
  if (bestStart === -1) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLength).join(':')}`;
}

/**
 * The text of a binary socket address: 4 bytes (an IPv4 socket) or 16 (IPv6; IPv4 clients of a
 * dual-stack socket arrive IPv4-mapped and are written as plain IPv4). '' for anything else.
 */
export function addressText(bytes: Uint8Array): string {
  if (bytes.length === 4) return ipv4Text(bytes, 0);
  if (bytes.length !== 16) return '';
  let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) mapped = bytes[i] === 0;
  return mapped ? ipv4Text(bytes, 12) : ipv6Text(bytes);
}

/**
 * The peer address of the connection ('' where the server cannot tell).
 * Read in binary: uWebSockets.js's text form costs more, and spells IPv6 out in full.
 */
export function socketAddress(res: HttpResponse): string {
  try {
    return addressText(new Uint8Array(res.getRemoteAddress()));
  } catch {
    return fallbackPeer(res);
  }
}

/**
 * The JS fallback has no getRemoteAddress, but wraps Node's own response, whose socket knows the
 * peer; IPv4 clients of a dual-stack socket are written as plain IPv4, as above.
 */
function fallbackPeer(res: HttpResponse): string {
  const peer = (res as unknown as { response?: { socket?: { remoteAddress?: string } } }).response?.socket?.remoteAddress ?? '';
  return peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer;
}

/**
 * The visitor's address under TRUST_PROXY (see clientAddressResolver): the socket peer, or the
 * rightmost X-Forwarded-For entry no trusted proxy added. The peer is read only when needed: that
 * read is the dearest step of a cached redirect.
 */
export function clientAddress(
  res: HttpResponse,
  forwardedFor: string,
  resolve: (peer: () => string, forwardedFor: string) => string,
): string {
  return resolve(() => socketAddress(res), forwardedFor);
}
