import { isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (a zone suffix ignored), or undefined for anything else. */
function ipv6Groups(address: string): number[] | undefined {
  const bare = address.split('%', 1)[0]!;
  if (!isIPv6(bare)) return undefined;
  // The WHATWG serialiser writes any spelling (upper case, leading zeros, a dotted IPv4 tail) as plain hex groups.
  const [head = '', tail] = new URL(`http://[${bare}]/`).hostname.slice(1, -1).split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = groups(head);
  if (tail === undefined) return front;
  const back = groups(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The key a per-address limit counts a client under: IPv4 as it is, IPv6 by its /64 (written as
 * that network's first address), since one client usually holds a whole /64 and can pick a new
 * address in it for every request. An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function addressLimitKey(address: string): string {
  const groups = address.includes(':') ? ipv6Groups(address) : undefined;
  if (groups === undefined) return address;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  const network = groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':');
  return new URL(`http://[${network}::]/`).hostname.slice(1, -1);
}
