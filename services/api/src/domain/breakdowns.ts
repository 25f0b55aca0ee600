import { type Breakdowns, DIMENSION_NAMES, DIMENSIONS, type DimensionName, type DimensionSpec } from '@deeplink/core';
import type { DimensionTotal } from '@deeplink/core/db';
import { topN, withLabels } from './top-n.js';

/** One dimension's counts as its breakdown lists them: its fixed values (zero-filled), or its top N and the rest. */
export function breakdownOf(name: DimensionName, counts: Iterable<[string, number]>): Record<string, number> {
  const { values }: DimensionSpec = DIMENSIONS[name];
  return values.kind === 'fixed' ? withLabels(Object.keys(values.values), counts) : topN(counts, values.limit, values.rest);
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
