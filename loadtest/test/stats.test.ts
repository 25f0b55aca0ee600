import { describe, expect, it } from 'vitest';
import { connectionsForRate, parseDuration, percentile, perSecond, ratio, summarize } from '../src/stats.js';

describe('percentile', () => {
  it('uses the nearest rank, so the answer is always an observed sample', () => {
    const samples = [5, 1, 4, 2, 3];
    expect(percentile(samples, 50)).toBe(3);
    expect(percentile(samples, 99)).toBe(5);
    expect(percentile(samples, 0)).toBe(1);
    expect(percentile(samples, 100)).toBe(5);
    expect(percentile(samples, 20)).toBe(1);
    expect(percentile(samples, 21)).toBe(2);
  });

  it('gives p99 of 100 samples as the 99th smallest and of 50 samples as the largest', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred.slice(0, 50), 99)).toBe(50);
  });

  it('is NaN without samples and rejects a percentage out of range', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it('does not reorder the caller’s array', () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });
});

describe('summarize', () => {
  it('reports count, p50, p99, min, max and mean', () => {
    expect(summarize([10, 20, 30, 40])).toEqual({ count: 4, p50: 20, p99: 40, min: 10, max: 40, mean: 25 });
  });

  it('is all NaN for no samples', () => {
    const empty = summarize([]);
    expect(empty.count).toBe(0);
    expect(empty.p99).toBeNaN();
  });
});

describe('ratio', () => {
  it('divides, and is null when the reference is missing or not positive', () => {
    expect(ratio(70_000, 100_000)).toBeCloseTo(0.7);
    expect(ratio(60_000, 20_000)).toBe(3);
    expect(ratio(1, 0)).toBeNull();
    expect(ratio(undefined, 5)).toBeNull();
    expect(ratio(5, Number.NaN)).toBeNull();
  });
});

describe('rates', () => {
  it('turns a count over milliseconds into a rate per second', () => {
    expect(perSecond(50_000, 2000)).toBe(25_000);
    expect(perSecond(5, 0)).toBe(0);
  });

  it('picks the connections that hold a rate in fixed-delay mode', () => {
    // 20,000 req/s with 10 ms pauses and 0.2 ms answers: each connection sends ~98 req/s.
    expect(connectionsForRate(20_000, 10, 0.2)).toBe(204);
    expect(connectionsForRate(10, 10, 0)).toBe(1);
  });
});

describe('parseDuration', () => {
  it('reads seconds, milliseconds and minutes', () => {
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('2')).toBe(2000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1.5m')).toBe(90_000);
  });

  it('rejects anything else', () => {
    expect(() => parseDuration('ten seconds')).toThrow(/not a duration/);
  });
});
