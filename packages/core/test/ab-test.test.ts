import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decideWinner, normalCdf, twoProportionTest, variantAt, visitorPlace } from '../src/routing/ab-test.js';

describe('sticky variants', () => {
  const variants = [
    { weight: 50, destination: 'a' },
    { weight: 30, destination: 'b' },
    { weight: 20, destination: 'c' },
  ];

  it('gives the same visitor the same variant, every time', () => {
    const hash = randomBytes(16).toString('hex');
    const first = variantAt(variants, visitorPlace('link-1', hash));
    for (let i = 0; i < 100; i++) expect(variantAt(variants, visitorPlace('link-1', hash))).toBe(first);
  });

  it('splits 10,000 visitors by the weights, within 2 points each', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 10_000; i++) counts[variantAt(variants, visitorPlace('link-1', randomBytes(16).toString('hex')))]!++;
    expect(Math.abs(counts[0]! / 100 - 50)).toBeLessThan(2);
    expect(Math.abs(counts[1]! / 100 - 30)).toBeLessThan(2);
    expect(Math.abs(counts[2]! / 100 - 20)).toBeLessThan(2);
  });

  it('splits the same visitors independently on two links', () => {
    const halves = [
      { weight: 50, destination: 'a' },
      { weight: 50, destination: 'b' },
    ];
    let same = 0;
    for (let i = 0; i < 10_000; i++) {
      const hash = randomBytes(16).toString('hex');
      if (variantAt(halves, visitorPlace('link-1', hash)) === variantAt(halves, visitorPlace('link-2', hash))) same++;
    }
    // Independent halves agree half the time.
    expect(Math.abs(same / 100 - 50)).toBeLessThan(2);
  });

  it('maps the places onto the weights exactly, the last place included', () => {
    expect(variantAt(variants, 0)).toBe(0);
    expect(variantAt(variants, 4_999)).toBe(0);
    expect(variantAt(variants, 5_000)).toBe(1);
    expect(variantAt(variants, 7_999)).toBe(1);
    expect(variantAt(variants, 8_000)).toBe(2);
    expect(variantAt(variants, 9_999)).toBe(2);
  });
});

describe('the two-proportion test', () => {
  it('matches known values', () => {
    expect(normalCdf(1.96)).toBeCloseTo(0.9750021, 6);
    expect(normalCdf(-1.96)).toBeCloseTo(0.0249979, 6);
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    // Reference values from the pooled z-test formula computed with erfc.
    const clear = twoProportionTest({ clicks: 1000, conversions: 200 }, { clicks: 1000, conversions: 150 });
    expect(clear.z).toBeCloseTo(2.9424494, 5);
    expect(clear.pValue).toBeCloseTo(0.0032563, 5);
    const noise = twoProportionTest({ clicks: 1000, conversions: 52 }, { clicks: 1000, conversions: 50 });
    expect(noise.z).toBeCloseTo(0.203281, 5);
    expect(noise.pValue).toBeCloseTo(0.838915, 5);
    expect(twoProportionTest({ clicks: 0, conversions: 0 }, { clicks: 10, conversions: 1 })).toEqual({ z: 0, pValue: 1 });
    expect(twoProportionTest({ clicks: 10, conversions: 0 }, { clicks: 10, conversions: 0 })).toEqual({ z: 0, pValue: 1 });
  });

  it('declares a winner only past the minimum clicks and the significance, across all the variants', () => {
    const clear = [
      { clicks: 200, conversions: 30 },
      { clicks: 200, conversions: 10 },
    ];
    expect(decideWinner(clear, { significance: 0.05, minimumClicks: 100 })?.winner).toBe(0);
    expect(decideWinner(clear, { significance: 0.05, minimumClicks: 201 })).toBeUndefined();
    expect(decideWinner(clear, { significance: 0.0001, minimumClicks: 100 })).toBeUndefined();
    // A third variant close to the leader: the leader has not beaten every other one.
    expect(decideWinner([...clear, { clicks: 200, conversions: 28 }], { significance: 0.05, minimumClicks: 100 })).toBeUndefined();
    // p = 0.00086 beats 0.05 / 1 but a threshold of 0.0015 split over 2 comparisons (0.00075) it does not.
    expect(decideWinner(clear, { significance: 0.0015, minimumClicks: 100 })?.winner).toBe(0);
    expect(decideWinner([...clear, { clicks: 200, conversions: 10 }], { significance: 0.0015, minimumClicks: 100 })).toBeUndefined();
  });
});
