import { describe, expect, it } from 'vitest';
import { loadConfig } from '@deeplink/core';
import { clickBatches, throughputFromSamples, YEAR_HOURS, yearOfClickBatches } from '../src/measure/worker-throughput.js';
import { metricValue } from '../src/measure/drain.js';
import { wrkRequests } from '../src/rotation.js';
import { linkBody } from '../k6/lib/traffic.js';
import { loadSettings } from '../src/settings.js';
import { AGENT_MIX, HUMAN_AGENTS, pickAgent, seededRandom } from '../src/user-agents.js';

describe('throughputFromSamples', () => {
  it('divides all the clicks by the time from the last idle sample to the first complete one', () => {
    const samples = [
      { atMs: 0, done: 0 },
      { atMs: 1000, done: 0 },
      { atMs: 1050, done: 2500 },
      { atMs: 2950, done: 80_000 },
      { atMs: 3000, done: 100_000 },
    ];
    expect(throughputFromSamples(samples, 100_000)).toEqual({ clicksPerSecond: 50_000, seconds: 2 });
  });

  it('is undefined until both ends were seen', () => {
    expect(
      throughputFromSamples(
        [
          { atMs: 0, done: 0 },
          { atMs: 50, done: 10 },
        ],
        100,
      ),
    ).toBeUndefined();
    // Work already under way at the first sample: the start is unknown.
    expect(
      throughputFromSamples(
        [
          { atMs: 0, done: 10 },
          { atMs: 50, done: 100 },
        ],
        100,
      ),
    ).toBeUndefined();
  });
});

describe('clickBatches', () => {
  it('cuts the clicks into batches of the redirector’s size, human agents only, on the given links', () => {
    const batches = [...clickBatches(['l1', 'l2'], 1201, 500, 1_700_000_000_000)];
    expect(batches.map((b) => b.clicks.length)).toEqual([500, 500, 201]);
    expect(new Set(batches.map((b) => b.batchId)).size).toBe(3);
    const humans = new Set(HUMAN_AGENTS.map((a) => a.userAgent));
    for (const click of batches.flatMap((b) => b.clicks)) {
      expect(['l1', 'l2']).toContain(click.linkId);
      expect(humans.has(click.userAgent)).toBe(true);
      expect(click.ts).toBeLessThanOrEqual(1_700_000_000_000);
      expect(click.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    }
    expect(batches.some((b) => b.appEvents)).toBe(false);
  });

  it('makes a share of the clicks Android store visits, each with its REDIRECT and a token of its own', () => {
    const batches = [...clickBatches(['l1', 'l2'], 2000, 500, 1_700_000_000_000, 0.2)];
    const events = batches.flatMap((b) => b.appEvents ?? []);
    expect(events.length).toBeGreaterThan(300);
    expect(events.length).toBeLessThan(500);
    for (const batch of batches) {
      for (const event of batch.appEvents ?? []) {
        const visit = batch.clicks[event.clickIndex!]!;
        expect(event).toMatchObject({
          name: 'REDIRECT',
          platform: 'ANDROID',
          linkId: visit.linkId,
          ts: visit.ts,
          eventId: `${batch.batchId}:${event.clickIndex}`,
        });
        expect(event.install!.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(visit.userAgent).toMatch(/ Android .* Mobile/);
      }
    }
    expect(new Set(events.map((e) => e.install!.token)).size).toBe(events.length);
  });
});

describe('yearOfClickBatches', () => {
  it('puts the same number of clicks in every hour of the year, none in the future', () => {
    const now = Date.UTC(2026, 5, 1, 12, 30);
    const batches = [...yearOfClickBatches('link', 3, now)];
    const clicks = batches.flatMap((b) => b.clicks);
    expect(clicks).toHaveLength(YEAR_HOURS * 3);
    expect(batches.slice(0, -1).every((b) => b.clicks.length === loadConfig({}).CLICK_BATCH_SIZE)).toBe(true);
    const perHour = new Map<number, number>();
    for (const click of clicks) perHour.set(Math.floor(click.ts / 3_600_000), (perHour.get(Math.floor(click.ts / 3_600_000)) ?? 0) + 1);
    expect(perHour.size).toBe(YEAR_HOURS);
    expect(new Set(perHour.values())).toEqual(new Set([3]));
    expect(Math.max(...clicks.map((c) => c.ts))).toBeLessThanOrEqual(now);
    expect(Math.min(...clicks.map((c) => c.ts))).toBeGreaterThanOrEqual(Date.UTC(2025, 5, 1, 12));
  });
});

describe('agent mix', () => {
  it('picks by weight, deterministically for a seed', () => {
    const random = seededRandom(1);
    const picks = Array.from({ length: 10_000 }, () => pickAgent(AGENT_MIX, random()));
    const botShare = picks.filter((a) => a.bot).length / picks.length;
    expect(botShare).toBeGreaterThan(0.1);
    expect(botShare).toBeLessThan(0.14);
    const again = seededRandom(1);
    expect(pickAgent(AGENT_MIX, again())).toBe(picks[0]);
  });

  it('rotates every link with several agents', () => {
    const requests = wrkRequests([{ code: 'a' }, { code: 'b' }], { perLink: 3 });
    expect(requests.map((r) => r.path)).toEqual(['/a', '/b', '/a', '/b', '/a', '/b']);
    expect(new Set(requests.map((r) => r.userAgent)).size).toBeGreaterThan(1);
  });
});

describe('settings', () => {
  it('has defaults that fit in ten minutes and pins server and wrk apart on two cores', () => {
    const settings = loadSettings({}, 2);
    expect(settings).toMatchObject({ durationMs: 30_000, rounds: 10, connections: 32, serverCpus: '0', wrkCpus: '1', keep: false });
    // Seven targets at full speed, then the half-rate run with its calibration: the HTTP part, which
    // is most of a run, leaves minutes for seeding, the worker and the query.
    const httpMs = 7 * (settings.warmupMs + settings.durationMs) + settings.warmupMs + settings.durationMs;
    expect(httpMs).toBeLessThanOrEqual(5 * 60_000);
  });

  it('reads overrides, skips pinning on one core or when told, and rejects nonsense', () => {
    expect(loadSettings({ BENCH_DURATION: '2s', BENCH_LINKS: '50' }, 4)).toMatchObject({ durationMs: 2000, links: 50, wrkCpus: '3' });
    expect(loadSettings({}, 1).serverCpus).toBeUndefined();
    expect(loadSettings({ BENCH_PIN: '0' }, 2).wrkCpus).toBeUndefined();
    expect(() => loadSettings({ BENCH_LINKS: '0' }, 2)).toThrow(/BENCH_LINKS/);
    expect(loadSettings({}, 2).only).toBeUndefined();
    expect(loadSettings({ BENCH_ONLY: 'redirector' }, 2).only).toBe('redirector');
    expect(() => loadSettings({ BENCH_ONLY: 'worker' }, 2)).toThrow(/BENCH_ONLY/);
  });
});

describe('helpers', () => {
  it('reads an unlabelled Prometheus sample', () => {
    const text = '# TYPE redirector_click_buffer_size gauge\nredirector_click_buffer_size 12\nredirector_clicks_dropped_total 0\n';
    expect(metricValue(text, 'redirector_click_buffer_size')).toBe(12);
    expect(metricValue(text, 'redirector_clicks_dropped_total')).toBe(0);
    expect(metricValue(text, 'missing')).toBeUndefined();
  });

  it('seeds links that cover every routing branch', () => {
    const bodies = [0, 1, 2, 3].map((i) => linkBody(i, `link ${i}`));
    expect(bodies[0]).toHaveProperty('iosLink');
    expect(bodies[1]).toHaveProperty('androidLink');
    expect(bodies[2]).toHaveProperty('desktopUrl');
    expect(bodies[3]).not.toHaveProperty('androidLink');
  });
});
