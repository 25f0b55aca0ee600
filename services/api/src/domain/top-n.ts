import { OTHER } from '@deeplink/core';

// Results are built with Object.fromEntries (own data properties), so a label such as
// `__proto__` (a valid referrer host) is kept as a count instead of touching the prototype.

/**
 * Keeps the `limit` largest counts and adds the rest up under `rest`, so the counts still sum to
 * the total. Equal counts are ordered by label, so the same data always gives the same top N.
 */
export function topN(counts: Iterable<[string, number]>, limit = 10, rest = OTHER): Record<string, number> {
  const sorted = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  const result = new Map<string, number>();
  sorted.forEach(([label, clicks], index) => {
    const key = index < limit ? label : rest;
    result.set(key, (result.get(key) ?? 0) + clicks);
  });
  return Object.fromEntries(result);
}

/** Counts for a fixed set of labels, zero where nothing was counted, plus any unexpected label. */
export function withLabels(labels: readonly string[], counts: Iterable<[string, number]>): Record<string, number> {
  const result = new Map(labels.map((label) => [label, 0]));
  for (const [label, clicks] of counts) result.set(label, (result.get(label) ?? 0) + clicks);
  return Object.fromEntries(result);
}
