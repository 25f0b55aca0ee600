import { describe, expect, it } from 'vitest';
import { combineRounds, roundOrder, roundsFor } from '../src/measure/http.js';
import type { WrkResult } from '../src/wrk.js';

const round = (requests: number, seconds: number, p50: number, p99: number, status = 0): WrkResult => ({
  requests,
  seconds,
  requestsPerSecond: requests / seconds,
  bytes: requests * 200,
  latencyMs: { mean: p50, p50, p90: p99, p99, p999: p99, max: p99 },
  errors: { connect: 0, read: 0, write: 0, status, timeout: 0 },
});

describe('interleaved rounds', () => {
  it('split the time into the rounds asked for, none shorter than a second', () => {
    expect(roundsFor(10_000, 5)).toBe(5);
    expect(roundsFor(3_000, 5)).toBe(3);
    expect(roundsFor(1_000, 5)).toBe(1);
    expect(roundsFor(500, 5)).toBe(1);
  });

  it('rotate the order each round, so every target takes every position', () => {
    const targets = ['a', 'b', 'c'];
    expect([0, 1, 2, 3].map((r) => roundOrder(targets, r).join(''))).toEqual(['abc', 'bca', 'cab', 'abc']);
  });

  it('add up requests and seconds, and take the median of the rounds’ percentiles', () => {
    const figure = combineRounds([round(20_000, 2, 0.4, 3), round(10_000, 2, 0.9, 12), round(18_000, 2, 0.5, 4, 2)], 32);
    expect(figure).toEqual({ requestsPerSecond: 8_000, p50Ms: 0.5, p99Ms: 4, requests: 48_000, errors: 2, connections: 32 });
  });
});
