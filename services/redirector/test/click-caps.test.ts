import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickJobData, redisKeys } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { cacheLink } from '@deeplink/core/redis';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { UA, clickQueue, createLink, createUser, queuedClicks, startRedirector, visit, type RedirectorProcess } from './support.js';

const DESTINATION = 'https://example.com/offer';
const OVERFLOW = 'https://example.com/sold-out';

describe('click caps', () => {
  let env: TestEnvironment;
  let queue: Queue<ClickJobData>;
  let userId: string;
  let redirectors: RedirectorProcess[];

  beforeAll(async () => {
    env = await createTestEnvironment({ UNKNOWN_CODE_BURST: '1000' });
    userId = await createUser(env.sql);
    queue = clickQueue(env.config.REDIS_URL, env.config.QUEUE_PREFIX);
    // Two processes sharing one Redis, as a deployment of several redirectors does.
    redirectors = await Promise.all([startRedirector(env.env), startRedirector(env.env)]);
  });

  afterAll(async () => {
    for (const redirector of redirectors ?? []) await redirector.stop();
    await queue?.close();
    await env?.close();
  });

  const keys = () => redisKeys(env.config.REDIS_PREFIX);
  const counted = async (linkId: string) => Number((await env.redis.get(keys().linkClickCount(linkId))) ?? 0);
  const clicksOf = async (linkId: string) => (await queuedClicks(queue)).filter((click) => click.linkId === linkId).length;
  const open = (code: string, index = 0, method = 'GET') =>
    visit(`${redirectors[index % redirectors.length]!.url}/${code}`, { 'user-agent': UA.windowsChrome }, method);

  it('let exactly the cap through, however many visits arrive at once on two redirectors', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: DESTINATION, clickCap: 100, capOverflowUrl: OVERFLOW });
    const answers = await Promise.all(Array.from({ length: 300 }, (_, index) => open(link.code, index)));
    const byLocation = new Map<string | null, number>();
    for (const answer of answers) {
      expect(answer.status).toBe(302);
      const location = answer.headers.get('location');
      byLocation.set(location, (byLocation.get(location) ?? 0) + 1);
    }
    // No overshoot: the count is compared and taken in one Redis script.
    expect(Object.fromEntries(byLocation)).toEqual({ [DESTINATION]: 100, [OVERFLOW]: 200 });
    expect(await counted(link.id)).toBe(100);
    // Only the visits let through are clicks.
    await expect.poll(() => clicksOf(link.id), { timeout: 5_000 }).toBe(100);
  });

  it('answer 410 past the cap without an overflow URL; HEAD takes no click', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: DESTINATION, clickCap: 2 });
    expect((await open(link.code, 0, 'HEAD')).headers.get('location')).toBe(DESTINATION);
    expect(await counted(link.id)).toBe(0);
    for (const index of [0, 1]) expect((await open(link.code, index)).headers.get('location')).toBe(DESTINATION);
    expect((await open(link.code, 0)).status).toBe(410);
    expect((await open(link.code, 1, 'HEAD')).status).toBe(410);
    expect(await counted(link.id)).toBe(2);
    // The debug page names the cap and where visitors go past it, and takes nothing.
    const debug = await (await visit(`${redirectors[0]!.url}/${link.code}?d=1`)).text();
    expect(debug).toContain('Every visitor after 2 clicks');
    expect(debug).toContain('410, the &quot;Link expired&quot; page');
    expect(await counted(link.id)).toBe(2);
  });

  it('keep the count when the cap changes: a raised cap lets in the difference, a lowered one closes at once', async () => {
    const links = linksRepository(env.sql);
    const link = await createLink(env.sql, userId, { defaultUrl: DESTINATION, clickCap: 3, capOverflowUrl: OVERFLOW });
    const fields = { title: link.title, defaultUrl: DESTINATION, capOverflowUrl: OVERFLOW };
    for (let i = 0; i < 4; i++) await open(link.code, i);
    expect(await counted(link.id)).toBe(3);

    // The routing record is written again (as the API does): the count in its own key stays.
    await cacheLink(env.redis, keys(), (await links.update(link.id, { ...fields, clickCap: 5 }))!);
    await expect.poll(async () => (await open(link.code)).headers.get('location'), { timeout: 5_000, interval: 50 }).toBe(DESTINATION);
    expect((await open(link.code, 1)).headers.get('location')).toBe(DESTINATION);
    expect((await open(link.code, 0)).headers.get('location')).toBe(OVERFLOW);
    expect(await counted(link.id)).toBe(5);

    await cacheLink(env.redis, keys(), (await links.update(link.id, { ...fields, clickCap: 1 }))!);
    await expect.poll(async () => (await open(link.code)).headers.get('location'), { timeout: 5_000, interval: 50 }).toBe(OVERFLOW);
    expect(await counted(link.id)).toBe(5);

    // No cap: no count is asked for or kept growing.
    await cacheLink(env.redis, keys(), (await links.update(link.id, fields))!);
    await expect.poll(async () => (await open(link.code)).headers.get('location'), { timeout: 5_000, interval: 50 }).toBe(DESTINATION);
    expect(await counted(link.id)).toBe(5);
  });

  it('leave links without a cap uncounted', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: DESTINATION });
    for (let i = 0; i < 3; i++) expect((await open(link.code, i)).headers.get('location')).toBe(DESTINATION);
    expect(await env.redis.exists(keys().linkClickCount(link.id))).toBe(0);
  });
});
