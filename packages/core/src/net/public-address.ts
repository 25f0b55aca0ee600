import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Thrown when a host resolves to an address that is not on the public internet. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/** Thrown when a host does not resolve now (a webhook delivery retries it like a refused connection). */
export class UnresolvedHostError extends Error {
  override name = 'UnresolvedHostError';
}

/** IPv4 ranges that are not the public internet: [first address, prefix length]. */
const PRIVATE_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const v4Number = (address: string): number => address.split('.').reduce((value, part) => value * 256 + Number(part), 0);

const isPrivateV4 = (address: string): boolean => {
  const value = v4Number(address);
  return PRIVATE_V4.some(([first, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(v4Number(first) / 2 ** (32 - bits)));
};

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const value = v4Number(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const first = parse(head);
  if (tail === undefined) return first;
  const last = parse(tail);
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}

function isPrivateV6(address: string): boolean {
  const groups = v6Groups(address);
  const [a = 0, b = 0] = groups;
  const zeroUntil = (n: number) => groups.slice(0, n).every((group) => group === 0);
  const embeddedV4 = () => `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  // ::ffff:a.b.c.d (IPv4-mapped) reaches the IPv4 address: judged as it.
  if (zeroUntil(5) && groups[5] === 0xffff) return isPrivateV4(embeddedV4());
  // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d.
  if (zeroUntil(6)) return true;
  // NAT64 (64:ff9b::/96) reaches the IPv4 address too.
  if (a === 0x64 && b === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) return isPrivateV4(embeddedV4());
  return (
    (a & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (a & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (a & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated)
    (a & 0xff00) === 0xff00 || // multicast ff00::/8
    (a === 0x2001 && b === 0x0db8) || // documentation
    a === 0x2002 // 6to4 carries an IPv4 address it may reach
  );
}

/** Whether `address` (an IPv4 or IPv6 literal) is on the public internet. Anything unparsable is not. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !isPrivateV4(address);
  if (family === 6) return !isPrivateV6(address);
  return false;
}

export type Lookup = (hostname: string) => Promise<LookupAddress[]>;
const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The address a request to `hostname` connects to: every address it resolves to must be public
 * (one private among them refuses it, so a name cannot straddle both), unless `allowPrivate`. The
 * caller connects to this address and no other, so an answer that changes between the check and
 * the connection (DNS rebinding) is never used.
 */
export async function resolvePublicAddress(hostname: string, options: { allowPrivate: boolean; lookup?: Lookup }): Promise<LookupAddress> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  let addresses: LookupAddress[];
  if (literal !== 0) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await (options.lookup ?? systemLookup)(host);
    } catch (error) {
      throw new UnresolvedHostError(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
  }
  if (addresses.length === 0) throw new UnresolvedHostError(`${host} does not resolve`);
  if (!options.allowPrivate) {
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) {
      const what = literal === 0 ? `${host} resolves to ${refused.address}, which` : host;
      throw new RefusedAddressError(`${what} is not a public address`);
    }
  }
  return addresses[0]!;
}
