import { BlockList, isIP } from 'node:net';

/** Which proxies in front are trusted: none, the nearest `hops`, or those at these addresses/CIDRs. */
export type TrustProxy = false | { hops: number } | { addresses: string[] };

/** Reads TRUST_PROXY; undefined when it is none of: off, a hop count, addresses and CIDRs. */
export function parseTrustProxy(value: string): TrustProxy | undefined {
  const text = value.trim().toLowerCase();
  if (text === '' || text === '0' || text === 'false' || text === 'no') return false;
  if (text === 'true' || text === 'yes') return { hops: 1 };
  if (/^\d+$/.test(text)) return { hops: Number(text) };
  const addresses = text.split(',').map((entry) => entry.trim());
  const valid = addresses.every((entry) => {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || extra !== undefined) return false;
    return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
  });
  return valid ? { addresses } : undefined;
}

/** TRUST_PROXY in the form Fastify's `trustProxy` takes: off, a function of the hop for a hop count, or addresses and CIDRs. */
export const fastifyTrustProxy = (trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) =>
  trust === false ? false : 'hops' in trust ? (_address, hop) => hop < trust.hops : trust.addresses;

/**
 * The function that finds a request's client address under TRUST_PROXY: walking from the socket
 * peer leftwards through X-Forwarded-For, the first hop that is not a trusted proxy. Proxies
 * append, so everything left of that hop is the client's own writing and is ignored. `peer` is
 * read only when needed (behind a hop count, an X-Forwarded-For entry usually answers).
 */
export function clientAddressResolver(trust: TrustProxy): (peer: () => string, forwardedFor: string) => string {
  if (trust === false) return (peer) => peer();
  if ('hops' in trust) {
    const { hops } = trust;
    return (peer, forwardedFor) => {
      if (hops === 0 || forwardedFor === '') return peer();
      const entries = forwardedFor.split(',');
      // The peer is hop 0, the rightmost entry hop 1…: the client is `hops` to the left of the peer.
      const candidate = entries[Math.max(0, entries.length - hops)]!.trim();
      return isIP(candidate) !== 0 ? candidate : peer();
    };
  }
  const list = new BlockList();
  for (const entry of trust.addresses) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  const trusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  return (peer, forwardedFor) => {
    const entries = forwardedFor === '' ? [] : forwardedFor.split(',');
    let address = peer();
    while (trusted(address) && entries.length > 0) {
      const next = entries.pop()!.trim();
      if (isIP(next) === 0) return address; // garbage from the hop before: the last address we can vouch for
      address = next;
    }
    return address;
  };
}
