import type { DimensionTotal } from '@deeplink/core';

/**
 * Link report breakdowns by fingerprint (see LinkReportData.fingerprint), in memory. Bounded by the
 * number of values held rather than of entries, because one busy link can have thousands of
 * referrer hosts; the least recently stored entries go first.
 */
export function breakdownCache(maxValues: number) {
  const entries = new Map<string, DimensionTotal[]>();
  let held = 0;
  return {
    get: (fingerprint: string): DimensionTotal[] | undefined => entries.get(fingerprint),

    /** Stores (or refreshes) a breakdown, then drops the oldest ones until the budget holds. */
    set(fingerprint: string, counts: DimensionTotal[]): void {
      const previous = entries.get(fingerprint);
      if (previous) {
        entries.delete(fingerprint);
        held -= previous.length;
      }
      if (counts.length > maxValues) return;
      entries.set(fingerprint, counts);
      held += counts.length;
      for (const [key, dropped] of entries) {
        if (held <= maxValues) break;
        entries.delete(key);
        held -= dropped.length;
      }
    },

    /** Number of breakdowns held, for tests. */
    get size(): number {
      return entries.size;
    },
  };
}
