import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import maxmind, { type CountryResponse } from 'maxmind';
import { BoundedMap } from '@deeplink/core';

/** Country label for addresses no database can place: private, reserved, malformed or unlisted. */
export const UNKNOWN_COUNTRY = 'Unknown';

// The default database (ip-location-db) stores `{ country_code }`; GeoLite2/GeoIP2 files store
// `{ country: { iso_code } }`, with `registered_country` where the country is unknown.
export type CountryRecord = CountryResponse & { country_code?: string };

// Ranges that never locate a visitor. Some databases still list a few of them (the default one
// places 192.168.0.0/16 in AU), so they are answered before any lookup. Checked with integer
// masks: net.BlockList allocates an address object per call, which shows at tens of thousands a second.
const NOT_ROUTABLE_V4 = (
  [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 3],
  ] as const
).map(([network, bits]) => {
  const mask = (~0 << (32 - bits)) >>> 0;
  return { network: ipv4ToInt(network), mask };
});
// Loopback and unspecified, unique-local fc00::/7, link-local fe80::/10, multicast ff00::/8,
// documentation 2001:db8::/32, discard 100::/64.
const NOT_ROUTABLE_V6 = /^(::1?$|f[cd][0-9a-f]{2}:|fe[89ab][0-9a-f]:|ff[0-9a-f]{2}:|2001:0?db8:|100::)/i;

function ipv4ToInt(ip: string): number {
  let value = 0;
  for (const part of ip.split('.')) value = value * 256 + Number(part);
  return value >>> 0;
}

const isRoutable = (ip: string, family: number): boolean => {
  if (family === 6) return !NOT_ROUTABLE_V6.test(ip);
  const value = ipv4ToInt(ip);
  return !NOT_ROUTABLE_V4.some(({ network, mask }) => (value & mask) >>> 0 === network);
};

const CACHE_SIZE = 200_000;

/** The country code a database record carries, in either record shape. */
export function countryOf(record: CountryRecord | null): string {
  const code = record?.country_code ?? record?.country?.iso_code ?? record?.registered_country?.iso_code;
  return code ? code.toUpperCase() : UNKNOWN_COUNTRY;
}

export interface GeoIp {
  /** ISO country code of an address, or UNKNOWN_COUNTRY. */
  country(ip: string): string;
}

/** Path of the CC0 country database that ships from npm, used when GEOIP_DB is not set. */
export function defaultGeoIpDatabase(): string {
  return createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
}

/** Opens a MaxMind-format country (or city) database; lookups are cached per address. */
export async function openGeoIp(path: string = defaultGeoIpDatabase()): Promise<GeoIp> {
  const reader = await maxmind.open<CountryRecord>(path);
  const dualStack = reader.metadata.ipVersion === 6;
  const lookup = (address: string): string => {
    // Dual-stack sockets report IPv4 clients as ::ffff:a.b.c.d.
    const ip = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(ip);
    if (family === 0 || !isRoutable(ip, family)) return UNKNOWN_COUNTRY;
    // An IPv4-only database answers IPv6 lookups from the address's first 32 bits: wrong countries.
    if (family === 6 && !dualStack) return UNKNOWN_COUNTRY;
    return countryOf(reader.get(ip));
  };
  const cache = new BoundedMap<string, string>(CACHE_SIZE);
  return { country: (ip) => cache.remember(ip, lookup) };
}
