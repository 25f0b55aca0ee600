import { type Breakdowns, DIMENSION_NAMES, DIMENSIONS, type DimensionName, type DimensionSpec } from '@deeplink/core';
import type { DimensionTotal } from '@deeplink/core/db';
import { topN, withLabels } from './top-n.js';

/**
 * One dimension's counts as its breakdown lists them: its fixed values (zero-filled), or its top N
 * and the rest. Counts stored under the rest label itself (the combination rollups keep referrer
 * hosts past an hour's first 100 as Other) belong to the rest: they never take a place in the top N.
 */
export function breakdownOf(name: DimensionName, counts: Iterable<[string, number]>): Record<string, number> {
  const { values }: DimensionSpec = DIMENSIONS[name];
  if (values.kind === 'fixed') return withLabels(Object.keys(values.values), counts);
  const named: [string, number][] = [];
  let folded = 0;
  for (const [label, clicks] of counts) {
    if (label === values.rest) folded += clicks;
    else named.push([label, clicks]);
  }
  const top = topN(named, values.limit, values.rest);
  return folded === 0 ? top : { ...top, [values.rest]: (top[values.rest] ?? 0) + folded };
}

/** Every dimension's breakdown, under its response key, from the clicks per dimension value. */
export function breakdowns(rows: readonly DimensionTotal[]): Breakdowns {
  const byDimension = new Map<string, [string, number][]>();
  for (const row of rows) {
    let counts = byDimension.get(row.dimension);
    if (!counts) byDimension.set(row.dimension, (counts = []));
    counts.push([row.value, row.clicks]);
  }
  return Object.fromEntries(
    DIMENSION_NAMES.map((name) => [DIMENSIONS[name].response, breakdownOf(name, byDimension.get(name) ?? [])]),
  ) as Breakdowns;
}
