import { describe, expect, it } from 'vitest';
import { humanRotation, PIPELINE_CRITERIA, ratesByMinute, stepMisses } from '../src/measure/pipeline.js';
import { HUMAN_AGENTS } from '../src/user-agents.js';

const step = {
  targetRps: 1000,
  requestsPerSecond: 990,
  requests: 59_400,
  errors: 0,
  connections: 10,
  maxQueueLagMs: 50,
  answered: 59_400,
  freshness: { samples: 100, p50Ms: 40, p99Ms: 90, timeouts: 0 },
  loss: 0,
  ratesByMinute: [990],
};

describe('the pipeline row', () => {
  it('holds a step only when nothing is lost, clicks are fresh and the queue keeps up', () => {
    expect(stepMisses(step)).toEqual([]);
    expect(stepMisses({ ...step, freshness: { ...step.freshness, p99Ms: PIPELINE_CRITERIA.freshnessP99Ms } })).toEqual([]);
    expect(stepMisses({ ...step, loss: 1 })).toEqual(['loss 1']);
    expect(stepMisses({ ...step, loss: -1 })).toEqual(['loss -1']);
    expect(stepMisses({ ...step, errors: 3 })).toEqual(['3 wrk errors']);
    expect(stepMisses({ ...step, freshness: { ...step.freshness, p99Ms: 1001 } })).toEqual([
      expect.stringMatching(/^freshness p99 1001 ms/),
    ]);
    expect(stepMisses({ ...step, freshness: { ...step.freshness, timeouts: 1 } })).toHaveLength(1);
    expect(stepMisses({ ...step, freshness: { samples: 0, p50Ms: NaN, p99Ms: NaN, timeouts: 0 } })).toHaveLength(1);
    expect(stepMisses({ ...step, maxQueueLagMs: PIPELINE_CRITERIA.maxQueueLagMs + 1 })).toEqual(['queue lag 5001 ms']);
  });

  it('reads a rate for each whole minute from about-once-a-second counter samples', () => {
    // 150 s of samples, 1.1 s apart: 1,000/s for the first minute, then 500/s.
    const samples = Array.from({ length: 137 }, (_, i) => {
      const at = i * 1100;
      return { at, value: at <= 60_000 ? at : 60_000 + (at - 60_000) / 2 };
    });
    const rates = ratesByMinute(samples);
    expect(rates).toHaveLength(2);
    expect(rates[0]).toBeCloseTo(1000, -1);
    expect(rates[1]).toBeCloseTo(500, -1);
    // Less than a minute: one figure over all of it; one sample: none.
    expect(
      ratesByMinute([
        { at: 0, value: 0 },
        { at: 2000, value: 100 },
      ]),
    ).toEqual([50]);
    expect(ratesByMinute([{ at: 0, value: 0 }])).toEqual([]);
  });

  it('visits every link with human agents only, so every answered redirect is a click', () => {
    const rotation = humanRotation([{ code: 'a' }, { code: 'b' }]);
    expect(rotation).toHaveLength(2 * HUMAN_AGENTS.length);
    expect(new Set(rotation.map((r) => r.userAgent))).toEqual(new Set(HUMAN_AGENTS.map((agent) => agent.userAgent)));
    expect(rotation.filter((r) => r.path === '/a')).toHaveLength(HUMAN_AGENTS.length);
  });
});
