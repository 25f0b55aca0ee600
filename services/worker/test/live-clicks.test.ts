import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_RECENT_CLICKS, redisKeys } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { createRedis, LIVE_ENTRY_RECENT_CLICKS, readLiveEntries } from '@deeplink/core/redis';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import type { EnrichedClick } from '../src/click-enricher.js';
import { createLivePublisher, LiveClicks, type LiveOutcome } from '../src/live-clicks.js';
import { capturingLogger, createLinks } from './helpers.js';

const enriched = (linkId: string, country = 'DE'): EnrichedClick => ({
  linkId,
  bucket: 0,
  visitor: 'visitor-hash',
  dimensions: { platform: 'ios', country, browser: 'Mobile Safari', os: 'iOS', device: 'Mobile', referrer: 't.co' },
});

describe('live click publisher', () => {
  let env: TestEnvironment;
  const captured = capturingLogger();
  beforeAll(async () => {
    env = await createTestEnvironment();
  });
  afterAll(async () => {
    await env.close();
  });

  const ownerOf = async (linkId: string) =>
    (await env.sql<{ user_id: string }[]>`SELECT user_id FROM links WHERE id = ${linkId}`)[0]!.user_id;

  it("appends one entry per owner with their links' clicks, the newest first and bounded", async () => {
    const [busy, quiet] = await createLinks(env.sql, 2);
    const [theirs] = await createLinks(env.sql, 1);
    const outcomes: [LiveOutcome, number][] = [];
    const keys = redisKeys(env.config.REDIS_PREFIX);
    const publisher = createLivePublisher({
      redis: env.redis,
      keys,
      links: linksRepository(env.sql),
      log: captured.log,
      onOutcome: (outcome, entries) => outcomes.push([outcome, entries]),
    });
    const start = Date.UTC(2026, 10, 25, 12);
    // Two batches of the same commit: they leave together, as one entry per user.
    const one = new LiveClicks();
    for (let i = 0; i < 150; i++) one.add(start + i, enriched(busy!));
    one.add(start + 1, enriched(quiet!, 'FR'));
    const two = new LiveClicks();
    two.add(start + 2, enriched(theirs!));
    two.add(start + 200, enriched(busy!));
    // A link deleted before the commit has no owner: skipped.
    two.add(start + 3, enriched('6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10'));
    publisher.publish(one);
    publisher.publish(two);
    await publisher.close();
    expect(outcomes).toEqual([['published', 2]]);

    const [mine] = await readLiveEntries(env.redis, keys, await ownerOf(busy!), '-');
    expect(mine!.links).toEqual({ [busy!]: 151, [quiet!]: 1 });
    // Each link keeps its own newest LIVE_RECENT_CLICKS, so the quiet link's click is among them.
    expect(mine!.recent).toHaveLength(LIVE_RECENT_CLICKS + 1);
    expect(mine!.recent.length).toBeLessThanOrEqual(LIVE_ENTRY_RECENT_CLICKS);
    expect(mine!.recent[0]).toEqual({
      at: new Date(start + 200).toISOString(),
      linkId: busy,
      platform: 'ios',
      country: 'DE',
      browser: 'Mobile Safari',
      os: 'iOS',
      referrer: 't.co',
    });
    const times = mine!.recent.map((click) => Date.parse(click.at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(mine!.recent.filter((click) => click.linkId === quiet)).toHaveLength(1);
    expect(JSON.stringify(mine)).not.toContain('visitor-hash');

    const [other] = await readLiveEntries(env.redis, keys, await ownerOf(theirs!), '-');
    expect(other!.links).toEqual({ [theirs!]: 1 });
    expect(await env.redis.pttl(keys.liveClicks(await ownerOf(theirs!)))).toBeGreaterThan(0);
  });

  it('counts and logs a Redis it cannot reach, and never throws', async () => {
    const [link] = await createLinks(env.sql, 1);
    const unreachable = createRedis('redis://127.0.0.1:1', { enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 0 });
    const outcomes: LiveOutcome[] = [];
    const publisher = createLivePublisher({
      redis: unreachable,
      keys: redisKeys(env.config.REDIS_PREFIX),
      links: linksRepository(env.sql),
      log: captured.log,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    const clicks = new LiveClicks();
    clicks.add(Date.now(), enriched(link!));
    expect(() => publisher.publish(clicks)).not.toThrow();
    await publisher.close();
    expect(outcomes).toEqual(['failed']);
    expect(captured.lines.some((line) => String(line.msg).includes('live clicks not published'))).toBe(true);
    unreachable.disconnect();
  });

  it('does not hold up shutdown for a Redis that never answers', async () => {
    const [link] = await createLinks(env.sql, 1);
    // Commands wait in the offline queue for a connection that never comes.
    const waiting = createRedis('redis://127.0.0.1:1', { maxRetriesPerRequest: null, retryStrategy: () => 1_000 });
    waiting.on('error', () => {});
    const publisher = createLivePublisher({
      redis: waiting,
      keys: redisKeys(env.config.REDIS_PREFIX),
      links: linksRepository(env.sql),
      log: captured.log,
    });
    const clicks = new LiveClicks();
    clicks.add(Date.now(), enriched(link!));
    publisher.publish(clicks);
    const started = performance.now();
    await publisher.close();
    expect(performance.now() - started).toBeLessThan(5_000);
    waiting.disconnect();
  });
});
