import { BoundedMap, type Config, MISSING_LINK } from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { answersBytes, type LinkAnswers, noAnswers } from './link-answers.js';

/** What the in-process cache holds for a code. */
export interface LinkEntry {
  /** The routing record; null for a code known not to exist. */
  link: CachedLink | null;
  /** The record's answers, built on first use (link-answers.ts); they live and go with the entry. */
  answers: LinkAnswers;
  /** The record as Redis holds it, to tell a changed record from the same one read again. */
  text: string;
  /** Until then the entry is used without asking Redis; afterwards it is still used, and refreshed. */
  freshUntil: number;
}

/** The entry of every unknown code: no record, nothing to answer but the 404. */
export const UNKNOWN_CODE: LinkEntry = { link: null, answers: noAnswers(), text: MISSING_LINK, freshUntil: Infinity };

/** What an entry costs, roughly: the record's text (two bytes a character) and its prepared answers. */
const entryBytes = (entry: LinkEntry): number => 2 * entry.text.length + answersBytes(entry.answers) + 200;

/**
 * The in-process cache of links by cache id (see linkCacheId): the links, bounded by entries and
 * bytes (BoundedMap), and unknown codes with until when they are known to be unknown, in a map of
 * their own so a scan of random codes cannot push real links out.
 */
export function createLinkCache(config: Pick<Config, 'LINK_CACHE_MAX' | 'LINK_CACHE_MAX_BYTES' | 'NEGATIVE_CACHE_MAX'>) {
  const links = new BoundedMap<string, LinkEntry>(config.LINK_CACHE_MAX, config.LINK_CACHE_MAX_BYTES, entryBytes);
  const unknown = new BoundedMap<string, number>(config.NEGATIVE_CACHE_MAX);
  return {
    /** The code's entry, UNKNOWN_CODE while it is known to be unknown, else undefined. */
    get(id: string, now: number): LinkEntry | undefined {
      const entry = links.get(id);
      if (entry !== undefined) return entry;
      const until = unknown.get(id);
      return until !== undefined && now < until ? UNKNOWN_CODE : undefined;
    },
    /** The link entry alone (never UNKNOWN_CODE), to compare a record read again with. */
    link: (id: string): LinkEntry | undefined => links.get(id),
    /** Keeps `entry`; setting one already held renews its place (see BoundedMap). */
    set(id: string, entry: LinkEntry): void {
      links.set(id, entry);
    },
    /** The code has no link (any more). `until`: how long to remember that; undefined: not at all. */
    setUnknown(id: string, until: number | undefined): void {
      links.delete(id);
      if (until !== undefined) unknown.set(id, until);
    },
    /** Forgets what is known of the code, link or not. */
    delete(id: string): void {
      links.delete(id);
      unknown.delete(id);
    },
    clear(): void {
      links.clear();
      unknown.clear();
    },
    /** Links held, for the metrics gauge. */
    size: () => links.size,
    /** Bytes the links hold (records and prepared answers), for the metrics gauge. */
    bytes: () => links.weight,
  };
}
