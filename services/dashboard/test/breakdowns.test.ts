import type { LinkAnalytics } from '@deeplink/client';
import { DIMENSION_NAMES, DIMENSIONS } from '@deeplink/core/dimensions';
import { describe, expect, it } from 'vitest';
import { reportBreakdowns, valueLabel } from '../src/lib/breakdowns.js';

/** A report whose every breakdown holds one value named after its dimension. */
const report = Object.fromEntries(
  DIMENSION_NAMES.map((name) => [DIMENSIONS[name].response, { [`${name}-value`]: 3 }]),
) as unknown as LinkAnalytics;

describe("the link page's breakdowns", () => {
  it('list every dimension of the registry, in its order, with its title and rows', () => {
    const shown = reportBreakdowns(report);
    expect(shown.map((breakdown) => breakdown.name)).toEqual(DIMENSION_NAMES);
    for (const [i, name] of DIMENSION_NAMES.entries()) {
      expect(shown[i]).toMatchObject({ title: DIMENSIONS[name].title, label: DIMENSIONS[name].label });
      expect(shown[i]!.rows.map((row) => [row.key, row.clicks])).toEqual([[`${name}-value`, 3]]);
    }
    expect(shown.map((breakdown) => breakdown.title)).toContain('Operating systems');
  });

  it('label values from the registry, and countries by name', () => {
    expect(valueLabel('platform')('ios')).toBe('iOS');
    expect(valueLabel('device')('Mobile')).toBe('Mobile');
    expect(valueLabel('country')('JP')).toBe('Japan (JP)');
    expect(valueLabel('os')('Mac OS')).toBe('Mac OS');
    expect(valueLabel('platform')('unexpected')).toBe('unexpected');
  });
});
