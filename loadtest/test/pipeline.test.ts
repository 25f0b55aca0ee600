import { describe, expect, it } from 'vitest';
import { humanRotation, PIPELINE_CRITERIA, stepMisses } from '../src/measure/pipeline.js';
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
};

describe('the pipeline row', () => {
  it('holds a step only when nothing is lost, clicks are fresh and the queue keeps up', () => {
    expect(stepMisses(step)).toEqual([]);
    expect(stepMisses({ ...step, freshness: { ...step.freshness, p99Ms: PIPELINE_CRITERIA.freshnessP99Ms } })).toEqual([]);
    expect(stepMisses({ ...step, loss: 1 })).toEqual(['loss 1']);
    expect(stepMisses({ ...step, loss: -1 })).toEqual(['loss -1']);
    expect(stepMisses({ ...step, errors: 3 })).toEqual(['3 wrk errors']);
    expect(stepMisses({ ...step, freshness: { ...step.freshness, p99Ms: 2001 } })).toEqual([
      expect.stringMatching(/^freshness p99 2001 ms/),
    ]);
    expect(stepMisses({ ...step, freshness: { ...step.freshness, timeouts: 1 } })).toHaveLength(1);
    expect(stepMisses({ ...step, freshness: { samples: 0, p50Ms: NaN, p99Ms: NaN, timeouts: 0 } })).toHaveLength(1);
    expect(stepMisses({ ...step, maxQueueLagMs: PIPELINE_CRITERIA.maxQueueLagMs + 1 })).toEqual(['queue lag 5001 ms']);
  });

  it('visits every link with human agents only, so every answered redirect is a click', () => {
    const rotation = humanRotation([{ code: 'a' }, { code: 'b' }]);
    expect(rotation).toHaveLength(2 * HUMAN_AGENTS.length);
    expect(new Set(rotation.map((r) => r.userAgent))).toEqual(new Set(HUMAN_AGENTS.map((agent) => agent.userAgent)));
    expect(rotation.filter((r) => r.path === '/a')).toHaveLength(HUMAN_AGENTS.length);
  });
});
