import { describe, expect, it } from 'vitest';
import { busyMicros, hotSpots, ownerOf, type CpuProfile } from '../src/cpu-profile.js';

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(idle)', '') },
    { id: 2, callFrame: frame('answer', 'file:///repo/services/redirector/src/app.ts', 41) },
    { id: 3, callFrame: frame('asJSON', 'file:///repo/node_modules/bullmq/dist/esm/classes/job.js', 317) },
    { id: 4, callFrame: frame('(garbage collector)', '') },
  ],
  samples: [1, 2, 2, 3, 4, 1],
  timeDeltas: [5000, 1000, 1000, 1000, 1000, 5000],
};

describe('cpu profile summary', () => {
  it('names the owner of a script: npm package, repository folder or node', () => {
    expect(ownerOf('file:///repo/node_modules/@fastify/ajv-compiler/index.js')).toBe('@fastify/ajv-compiler');
    expect(ownerOf('file:///repo/node_modules/a/node_modules/b/x.js')).toBe('b');
    expect(ownerOf('file:///repo/packages/core/src/routing/platform.ts')).toBe('packages/core');
    expect(ownerOf('node:internal/url')).toBe('node (internals)');
    expect(ownerOf('')).toBe('(native, GC, program)');
  });

  it('adds up self time per function and per owner, leaving idle time out', () => {
    expect(busyMicros(profile)).toBe(4000);
    expect(hotSpots(profile, 'function')).toEqual([
      { name: 'answer services/redirector app.ts:42', selfMs: 2, share: 0.5 },
      { name: 'asJSON bullmq job.js:318', selfMs: 1, share: 0.25 },
      { name: '(garbage collector)', selfMs: 1, share: 0.25 },
    ]);
    expect(hotSpots(profile, 'owner', 1)).toEqual([{ name: 'services/redirector', selfMs: 2, share: 0.5 }]);
  });
});
