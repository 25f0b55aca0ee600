// The long links' store on its own, over real Redis and PostgreSQL: which long links a domain
// answers, the link each becomes, what a process remembers, and the per-domain cap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { longLinkDomain } from '../src/domain-lookup.js';
import { createLongLinks } from '../src/long-links.js';
import { createUser } from './support.js';

let env: TestEnvironment;
let userId: string;
let domainId: string;

beforeAll(async () => {
  env = await createTestEnvironment();
  userId = await createUser(env.sql);
  const [row] = await env.sql<{ id: string }[]>`
    INSERT INTO domains (user_id, hostname, verification_token, verified_at, allowed_url_patterns)
    VALUES (${userId}, 'store.example.test', 't', now(), ARRAY['https://example.com/*']) RETURNING id`;
  domainId = row!.id;
});
afterAll(() => env?.close());

const store = (max: number) => {
  const logger = capturingLogger('redirector');
  const longLinks = createLongLinks({
    config: { ...env.config, LONG_LINKS_PER_DOMAIN_MAX: max },
    keys: redisKeys(env.config.REDIS_PREFIX),
    redis: env.redis,
    sql: env.sql,
    logger: logger.log,
  });
  return { longLinks, lines: logger.lines };
};
const domain = () => longLinkDomain({ id: domainId, apps: [], allowedUrlPatterns: ['https://example.com/*'], userId })!;

describe('long links', () => {
  it('need patterns and an owner in the domain record', () => {
    expect(longLinkDomain({ id: domainId, apps: [] })).toBeUndefined();
    expect(longLinkDomain({ id: domainId, apps: [], allowedUrlPatterns: [], userId })).toBeUndefined();
    expect(domain()).toMatchObject({ domainId, userId });
  });

  it('are wanted only with a link and every destination allowed', () => {
    const { longLinks } = store(10);
    expect(longLinks.wanted('apn=com.example.app', domain())).toBeUndefined();
    expect(longLinks.wanted('link=https%3A%2F%2Fexample.com%2Fa&ofl=https%3A%2F%2Fevil.test%2F', domain())).toBeUndefined();
    const wanted = longLinks.wanted('link=https%3A%2F%2Fexample.com%2Fa&d=1', domain());
    expect(wanted).toMatchObject({ params: { link: 'https://example.com/a' }, key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(longLinks.wanted('d=1&link=https%3A%2F%2Fexample.com%2Fa', domain())!.key).toBe(wanted!.key);
  });

  it('find or make their link once, share concurrent loads, and remember its code', async () => {
    const { longLinks } = store(10);
    const wanted = longLinks.wanted('link=https%3A%2F%2Fexample.com%2Fshared', domain())!;
    expect(longLinks.peek('store.example.test', wanted.key, Date.now())).toBeUndefined();
    const [first, second] = await Promise.all([
      longLinks.load('store.example.test', domain(), wanted),
      longLinks.load('store.example.test', domain(), wanted),
    ]);
    expect(first).toEqual({ code: expect.any(String), created: true });
    expect(second).toBe(first);
    expect(longLinks.peek('store.example.test', wanted.key, Date.now())).toBe(first!.code);
    // Another process finds the same link.
    expect(await store(10).longLinks.load('store.example.test', domain(), wanted)).toEqual({ code: first!.code, created: false });
    // Parameters no link can have make none.
    const bad = longLinks.wanted('link=https%3A%2F%2Fexample.com%2Fx&apn=not%20a%20package', domain())!;
    expect(await longLinks.load('store.example.test', domain(), bad)).toEqual({ code: null, created: false });
  });

  it('stop making links at the cap, still finding the ones made, and say so in the log', async () => {
    const made = (await env.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM links WHERE domain_id = ${domainId}`)[0]!.count;
    const { longLinks, lines } = store(made);
    const known = longLinks.wanted('link=https%3A%2F%2Fexample.com%2Fshared', domain())!;
    expect((await longLinks.load('store.example.test', domain(), known)).code).toEqual(expect.any(String));
    const fresh = longLinks.wanted('link=https%3A%2F%2Fexample.com%2Fnew', domain())!;
    expect(await longLinks.load('store.example.test', domain(), fresh)).toEqual({ code: null, created: false });
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', hostname: 'store.example.test', max: made }));
  });
});
