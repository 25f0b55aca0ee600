import { Resolver } from 'node:dns/promises';

/** The TXT strings of a DNS name (each record's chunks joined); [] when it has none. */
export type TxtLookup = (name: string) => Promise<string[]>;

/** Answers that mean "no such record": the domain is simply not verified yet. */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME', 'NXDOMAIN']);

/** TXT lookups through `servers` (DNS_SERVERS), or the system's resolvers. */
export function txtLookup(servers: string[] | undefined): TxtLookup {
  const resolver = new Resolver({ timeout: 3_000, tries: 2 });
  if (servers?.length) resolver.setServers(servers);
  return async (name) => {
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (error) {
      if (NO_RECORD.has((error as { code?: string }).code ?? '')) return [];
      throw error;
    }
  };
}
