import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { type DynamicLinkDeps, findOrCreateDynamicLink, type DynamicLinkRequest } from '../src/db/dynamic-links.js';
import { usersRepository } from '../src/db/users-repository.js';
import { dynamicLinkKey } from '../src/firebase/dynamic-link-key.js';
import { generateShortCode } from '../src/ids/short-code.js';
import { redisKeys } from '../src/redis/keys.js';
import { parseCachedLink } from '../src/redis/link-cache.js';

describe('dynamicLinkKey', () => {
  it('is the same for the same parameters in any order, blank ones and surrounding spaces aside', () => {
    const key = dynamicLinkKey({ link: 'https://example.com/a', apn: 'com.example.app', st: 'Title' });
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(dynamicLinkKey({ st: 'Title', apn: 'com.example.app', link: 'https://example.com/a' })).toBe(key);
    expect(dynamicLinkKey({ link: ' https://example.com/a', apn: 'com.example.app ', st: 'Title', sd: '', afl: '  ' })).toBe(key);
  });

  it('differs for another value, another parameter holding it, or another variant', () => {
    const key = dynamicLinkKey({ link: 'https://example.com/a', apn: 'com.example.app' });
    expect(dynamicLinkKey({ link: 'https://example.com/b', apn: 'com.example.app' })).not.toBe(key);
    expect(dynamicLinkKey({ link: 'https://example.com/a', ibi: 'com.example.app' })).not.toBe(key);
    expect(dynamicLinkKey({ link: 'https://example.com/a', apn: 'com.example.app' }, 'SHORT')).not.toBe(key);
    expect(dynamicLinkKey({ link: 'https://example.com/a', apn: 'com.example.app' }, 'SHORT')).not.toBe(
      dynamicLinkKey({ link: 'https://example.com/a', apn: 'com.example.app' }, 'UNGUESSABLE'),
    );
  });
});

describe('findOrCreateDynamicLink', () => {
  let env: TestEnvironment;
  let deps: DynamicLinkDeps;
  let alice: string;
  let bob: string;
  let aliceDomain: string;
  const keys = () => redisKeys(env.config.REDIS_PREFIX);
  const request = (overrides: Partial<DynamicLinkRequest> = {}): DynamicLinkRequest => ({
    userId: alice,
    domainId: null,
    params: { link: 'https://example.com/welcome', apn: 'com.example.android', st: 'Welcome' },
    makeCode: () => generateShortCode(),
    ...overrides,
  });
  const linkOf = async (result: Awaited<ReturnType<typeof findOrCreateDynamicLink>>) => {
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    return result;
  };

  beforeAll(async () => {
    env = await createTestEnvironment();
    deps = { sql: env.sql, redis: env.redis, keys: keys() };
    const users = usersRepository(env.sql);
    alice = (await users.create({ name: 'A', email: 'alice@example.com', passwordHash: 'x' }))!.id;
    bob = (await users.create({ name: 'B', email: 'bob@example.com', passwordHash: 'x' }))!.id;
    const [domain] = await env.sql<{ id: string }[]>`
      INSERT INTO domains (user_id, hostname, verification_token, verified_at)
      VALUES (${alice}, 'go.alice.example', 'token', now()) RETURNING id`;
    aliceDomain = domain!.id;
  });
  afterAll(() => env.close());

  it('creates the link through the mapping, stores its key and caches it', async () => {
    const { link, created, warnings } = await linkOf(await findOrCreateDynamicLink(deps, request({ makeCode: () => 'fdlOne1' })));
    expect(created).toBe(true);
    expect(warnings).toEqual([]);
    expect(link).toMatchObject({
      code: 'fdlOne1',
      domain: null,
      title: 'Welcome',
      defaultUrl: 'https://example.com/welcome',
      androidLink: { url: 'https://example.com/welcome', appPackageName: 'com.example.android' },
      socialPreview: { title: 'Welcome' },
    });
    const [row] = await env.sql`SELECT dynamic_link_key, user_id FROM links WHERE id = ${link.id}`;
    expect(row).toEqual({ dynamic_link_key: dynamicLinkKey(request().params), user_id: alice });
    const cached = parseCachedLink(await env.redis.get(keys().link('fdlOne1')));
    expect(cached).toMatchObject({
      id: link.id,
      defaultUrl: 'https://example.com/welcome',
      androidLink: { appPackageName: 'com.example.android' },
    });
  });

  it('answers the same link for the same parameters in another order, without drawing a code', async () => {
    const first = await linkOf(
      await findOrCreateDynamicLink(deps, request({ params: { link: 'https://example.com/same', ofl: 'https://example.com/desk' } })),
    );
    const again = await linkOf(
      await findOrCreateDynamicLink(
        deps,
        request({
          params: { ofl: 'https://example.com/desk', link: 'https://example.com/same' },
          makeCode: () => {
            throw new Error('no code should be drawn for an existing link');
          },
        }),
      ),
    );
    expect(again.created).toBe(false);
    expect(again.link.id).toBe(first.link.id);
    expect(again.link.desktopUrl).toBe('https://example.com/desk');
  });

  it('keeps one link per key on each domain: another domain, another variant or another account gets its own', async () => {
    const params = { link: 'https://example.com/per-domain' };
    const onDefault = await linkOf(await findOrCreateDynamicLink(deps, request({ params })));
    const onCustom = await linkOf(await findOrCreateDynamicLink(deps, request({ params, domainId: aliceDomain })));
    const onCustomAgain = await linkOf(await findOrCreateDynamicLink(deps, request({ params, domainId: aliceDomain })));
    const otherVariant = await linkOf(await findOrCreateDynamicLink(deps, request({ params, variant: 'SHORT' })));
    const bobs = await linkOf(await findOrCreateDynamicLink(deps, request({ params, userId: bob })));
    expect(onCustom.link.domain).toBe('go.alice.example');
    expect(onCustomAgain.link.id).toBe(onCustom.link.id);
    const ids = new Set([onDefault.link.id, onCustom.link.id, otherVariant.link.id, bobs.link.id]);
    expect(ids.size).toBe(4);
    const [owner] = await env.sql`SELECT user_id FROM links WHERE id = ${bobs.link.id}`;
    expect(owner!.user_id).toBe(bob);
    const cached = parseCachedLink(await env.redis.get(keys().link(`go.alice.example/${onCustom.link.code}`)));
    expect(cached?.id).toBe(onCustom.link.id);
  });

  it('makes one link when the same parameters arrive at once', async () => {
    const params = { link: 'https://example.com/race', ibi: 'com.example.ios' };
    const results = await Promise.all(Array.from({ length: 8 }, () => findOrCreateDynamicLink(deps, request({ params }))));
    const links = await Promise.all(results.map(linkOf));
    expect(new Set(links.map((result) => result.link.id)).size).toBe(1);
    expect(links.filter((result) => result.created)).toHaveLength(1);
    const [count] = await env.sql`SELECT count(*)::int AS n FROM links WHERE dynamic_link_key = ${dynamicLinkKey(params)}`;
    expect(count!.n).toBe(1);
  });

  it('draws again when a code is taken, telling the drawer the attempt', async () => {
    await linkOf(
      await findOrCreateDynamicLink(deps, request({ params: { link: 'https://example.com/taken' }, makeCode: () => 'takenCd' })),
    );
    const attempts: number[] = [];
    const { link } = await linkOf(
      await findOrCreateDynamicLink(
        deps,
        request({
          params: { link: 'https://example.com/other' },
          makeCode: (attempt) => {
            attempts.push(attempt);
            return attempt < 2 ? 'takenCd' : 'freeCode';
          },
        }),
      ),
    );
    expect(attempts).toEqual([0, 1, 2]);
    expect(link.code).toBe('freeCode');
  });

  it('gives up when every code drawn is taken', async () => {
    await expect(
      findOrCreateDynamicLink(deps, request({ params: { link: 'https://example.com/never' }, makeCode: () => 'takenCd' })),
    ).rejects.toThrow('no free short code');
  });

  it('answers the warnings of the mapping, for a new link and an existing one', async () => {
    const params = { link: 'https://example.com/android', afl: 'https://example.com/android-only' };
    const created = await linkOf(await findOrCreateDynamicLink(deps, request({ params })));
    const found = await linkOf(await findOrCreateDynamicLink(deps, request({ params })));
    expect(created.warnings.map((warning) => warning.param)).toEqual(['afl']);
    expect(found.warnings).toEqual(created.warnings);
  });

  it('names the parameter of a value that cannot make a link, creating nothing', async () => {
    const result = await findOrCreateDynamicLink(deps, request({ params: { link: 'https://example.com/x', ofl: 'javascript:alert(1)' } }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((error) => error.param)).toEqual(['ofl']);
    const [count] = await env.sql`SELECT count(*)::int AS n FROM links WHERE default_url = 'https://example.com/x'`;
    expect(count!.n).toBe(0);
  });

  it('refuses a destination longer than the limit, naming the parameter it comes from', async () => {
    const result = await findOrCreateDynamicLink(
      deps,
      request({ params: { link: 'https://example.com/short', ofl: `https://example.com/${'d'.repeat(300)}` }, maxDestinationBytes: 200 }),
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toEqual([{ param: 'ofl', message: expect.stringContaining('longer than 200 bytes') }]);
  });

  it('still answers the link when the cache cannot be written, telling the caller', async () => {
    const broken = {
      ...deps,
      redis: env.redis.duplicate({ lazyConnect: true, maxRetriesPerRequest: 0, port: 1, enableOfflineQueue: false }),
    };
    const failures: string[] = [];
    const { link, created } = await linkOf(
      await findOrCreateDynamicLink(
        { ...broken, onCacheError: (_error, failed) => failures.push(failed.code) },
        request({ params: { link: 'https://example.com/uncached' } }),
      ),
    );
    expect(created).toBe(true);
    expect(failures).toEqual([link.code]);
    broken.redis.disconnect();
  });
});
