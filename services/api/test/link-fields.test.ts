// Walks LINK_FIELDS, the one table of a link's fields: every field goes through create, the
// repository's reads, a merge-patch update, the API's answers and the routing record in Redis
// (real API, PostgreSQL, Redis and DNS). A new field needs a value in FIRST and SECOND below
// (the compiler asks for it), and then passes or fails here with everything else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { LINK_FIELDS, type LinkRecord, linkFieldsSchema, linkSummarySchema, redisKeys } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createApiHarness, type ApiHarness } from './harness.js';

/** A value of every field a client may send, as it sends them. */
type EveryInput = Required<z.input<typeof linkFieldsSchema>>;

const FIRST: EveryInput = {
  title: 'Spring sale',
  defaultUrl: 'https://example.com/sale',
  androidLink: { url: 'shop://sale', appPackageName: 'com.example.shop', minimumVersion: '2.1.0', fallbackUrl: 'https://example.com/a' },
  iosLink: {
    url: 'shop://sale',
    bundleId: 'com.example.shop',
    minimumVersion: '3.0',
    fallbackUrl: 'https://example.com/i',
    ipadUrl: 'shoppad://sale',
    ipadBundleId: 'com.example.shoppad',
    ipadFallbackUrl: 'https://example.com/ipad',
    skipAppPage: true,
  },
  desktopUrl: 'https://example.com/desktop',
  customParameters: { utm_campaign: 'spring' },
  expirationDate: '2030-12-31T23:59:59.000Z',
  tags: ['spring', 'email'],
  expiredUrl: 'https://example.com/over',
  socialPreview: { title: 'Spring', description: 'All 20% off', imageUrl: 'https://example.com/spring.png' },
  clickCap: 100,
  capOverflowUrl: 'https://example.com/sold-out',
};

/** Another value of every field, each different from FIRST's: what the update sends. */
const SECOND: EveryInput = {
  title: 'Summer sale',
  defaultUrl: 'https://example.com/summer',
  androidLink: { url: 'shop://summer', appPackageName: 'com.example.summer', minimumVersion: '3', fallbackUrl: 'https://example.com/a2' },
  iosLink: {
    url: 'shop://summer',
    bundleId: 'com.example.summer',
    minimumVersion: '4.1',
    fallbackUrl: 'https://example.com/i2',
    ipadUrl: 'summerpad://summer',
    ipadBundleId: 'com.example.summerpad',
    ipadFallbackUrl: 'https://example.com/ipad2',
    skipAppPage: false,
  },
  desktopUrl: 'https://example.com/desktop2',
  customParameters: { utm_campaign: 'summer', utm_medium: 'ad' },
  expirationDate: '2031-06-30T12:00:00.000Z',
  tags: ['summer'],
  expiredUrl: 'https://example.com/over2',
  socialPreview: { title: 'Summer', imageUrl: 'https://example.com/summer.png' },
  clickCap: 250,
  capOverflowUrl: 'https://example.com/sold-out-2',
};

const HOSTNAME = 'links.example.test';
const fieldEntries = Object.entries(LINK_FIELDS);
const written = fieldEntries.flatMap(([name, { input }]) => (input === undefined ? [] : [{ name: name as keyof LinkRecord, input }]));
const cacheKeys = fieldEntries.flatMap(([, { cache }]) => (cache === undefined ? [] : [cache.key]));

let api: ApiHarness;
let dns: DnsServer;
let owner: { id: string; token: string };
const keys = () => redisKeys(api.env.config.REDIS_PREFIX);
const repository = () => linksRepository(api.env.sql);

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address } });
  owner = await api.registerUser('Owner');
  // A custom domain, so that `domain` is set, and the owner's app of SECOND's bundle, so that `iosApp` is.
  const domain = (await api.request({ method: 'POST', url: '/api/domains', token: owner.token, payload: { hostname: HOSTNAME } })).json()
    .data.domain;
  dns.records.set(domain.verification.name, [domain.verification.value]);
  const verified = await api.request({ method: 'POST', url: `/api/domains/${domain.id}/verify`, token: owner.token });
  expect(verified.json().data.domain.status).toBe('active');
  const app = await api.request({
    method: 'POST',
    url: '/api/apps',
    token: owner.token,
    payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: SECOND.iosLink.bundleId, name: 'Summer Shop', appStoreId: '123456' },
  });
  expect(app.statusCode).toBe(201);
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

/** The cached routing record of a link on HOSTNAME, as stored. */
const cachedText = async (code: string) => (await api.env.redis.get(keys().link(`${HOSTNAME}/${code}`)))!;
const codeOf = (url: string) => url.split('/').pop()!;

/** Every field of the record is read (a missing SELECT item or read would be undefined). */
function expectEveryField(record: LinkRecord | undefined) {
  expect(record).toBeDefined();
  for (const [name] of fieldEntries) expect(record![name as keyof LinkRecord], name).not.toBeUndefined();
}

/** Each written field holds the value `sent` parses to. */
function expectWritten(record: LinkRecord, sent: EveryInput) {
  const parsed = linkFieldsSchema.parse(sent);
  for (const { name, input } of written) expect(record[name], name).toEqual(parsed[input]);
}

describe('LINK_FIELDS', () => {
  it('has samples that change every input field, and each input written by one field', () => {
    expect(written.map(({ input }) => input).sort()).toEqual(Object.keys(linkFieldsSchema.shape).sort());
    for (const input of Object.keys(FIRST) as (keyof EveryInput)[]) expect(SECOND[input], input).not.toEqual(FIRST[input]);
  });

  it('names existing columns of links, each read by one field', async () => {
    const rows = await api.env.sql<{ name: string }[]>`
      SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'links'`;
    const columns = fieldEntries.flatMap(([, field]) => (typeof field.column === 'string' ? [field.column] : []));
    expect(rows.map((row) => row.name)).toEqual(expect.arrayContaining(columns));
    expect(new Set(columns).size).toBe(columns.length);
  });

  it('round-trips every field: create, read, update, the API answers and the cached record', async () => {
    // Create: the answer shows every field as sent.
    const created = await api.request({ method: 'POST', url: '/api/links', token: owner.token, payload: { ...FIRST, domain: HOSTNAME } });
    expect(created.statusCode).toBe(201);
    const link = created.json().data.link;
    expect(link).toEqual({
      ...FIRST,
      id: expect.any(String),
      url: `http://${HOSTNAME}/${codeOf(link.url)}`,
      domain: HOSTNAME,
      passwordProtected: false,
      createdAt: expect.any(String),
      updatedAt: link.createdAt,
    });
    const code = codeOf(link.url);

    // Read: every query of the repository returns every field.
    const links = repository();
    const record = (await links.findById(link.id))!;
    expectEveryField(record);
    expectWritten(record, FIRST);
    expect(record).toMatchObject({ id: link.id, userId: owner.id, code, domain: HOSTNAME, iosApp: null });
    expect(record.createdAt.toISOString()).toBe(link.createdAt);
    expect(await links.findByCode(code, HOSTNAME)).toEqual(record);
    expect(await links.findByCacheId(`${HOSTNAME}/${code}`)).toEqual(record);
    const listed = await links.listByUser(owner.id, { offset: 0, limit: 10, sortBy: 'createdAt', direction: 'desc' }, {}, true);
    expect(listed.links).toEqual([{ ...record, clicks: 0 }]);
    expect(await links.listByIosBundle(owner.id, FIRST.iosLink.bundleId)).toEqual([record]);
    const batches = [];
    for await (const batch of links.allInBatches()) batches.push(...batch);
    expect(batches).toEqual([record]);
    expect((await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token })).json().data.link).toEqual(link);

    // The cached record: the routing fields only, and no title (the preview's takes its place).
    expect(JSON.parse(await cachedText(code))).toEqual({
      id: link.id,
      defaultUrl: FIRST.defaultUrl,
      androidLink: FIRST.androidLink,
      iosLink: FIRST.iosLink,
      desktopUrl: FIRST.desktopUrl,
      customParameters: FIRST.customParameters,
      expiresAt: Date.parse(FIRST.expirationDate),
      expiredUrl: FIRST.expiredUrl,
      socialPreview: FIRST.socialPreview,
      clickCap: FIRST.clickCap,
      capOverflowUrl: FIRST.capOverflowUrl,
    });

    // Update: a merge patch of every field; the answer, the row and the cached record follow.
    // FIRST's preview description would stay under a merge patch that leaves it out.
    const patch = { ...SECOND, socialPreview: { ...SECOND.socialPreview, description: null } };
    const updated = await api.request({ method: 'PUT', url: `/api/links/${link.id}`, token: owner.token, payload: patch });
    expect(updated.statusCode).toBe(200);
    const after = updated.json().data.link;
    expect(after).toEqual({ ...link, ...SECOND, updatedAt: expect.any(String) });
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(link.updatedAt));
    const changed = (await links.findById(link.id))!;
    expectEveryField(changed);
    expectWritten(changed, SECOND);
    expect(changed.iosApp).toEqual({ name: 'Summer Shop', appStoreId: '123456' });
    expect(JSON.parse(await cachedText(code))).toEqual({
      id: link.id,
      defaultUrl: SECOND.defaultUrl,
      androidLink: SECOND.androidLink,
      iosLink: SECOND.iosLink,
      desktopUrl: SECOND.desktopUrl,
      customParameters: SECOND.customParameters,
      expiresAt: Date.parse(SECOND.expirationDate),
      expiredUrl: SECOND.expiredUrl,
      socialPreview: SECOND.socialPreview,
      iosApp: { name: 'Summer Shop', appStoreId: '123456' },
      clickCap: SECOND.clickCap,
      capOverflowUrl: SECOND.capOverflowUrl,
    });

    // Without a preview the iOS page needs the title, and a password puts its hash in the record:
    // every cache key of the table has now been seen.
    const patched = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { socialPreview: null, password: 'a link password' },
    });
    expect(patched.json().data.link.passwordProtected).toBe(true);
    const withTitle = JSON.parse(await cachedText(code));
    expect(withTitle).toMatchObject({
      title: SECOND.title,
      iosApp: { name: 'Summer Shop' },
      passwordHash: expect.stringMatching(/^\$argon2id\$/),
    });
    expect(withTitle).not.toHaveProperty('socialPreview');
    expect(new Set([...Object.keys(withTitle), 'socialPreview'])).toEqual(new Set(cacheKeys));

    // List items: the summary fields (and tags on request), nothing else.
    const list = await api.request({ method: 'GET', url: '/api/links?include=tags', token: owner.token });
    const [item] = list.json().data.links;
    expect(Object.keys(item).sort()).toEqual([...Object.keys(linkSummarySchema.shape), 'tags'].sort());
    expect(item).toMatchObject({ id: link.id, url: link.url, title: SECOND.title, tags: SECOND.tags });

    // Clearing every optional field through the API leaves them absent from the answer and the record.
    const cleared = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: {
        ...Object.fromEntries(Object.keys(SECOND).flatMap((input) => (['title', 'defaultUrl'].includes(input) ? [] : [[input, null]]))),
        password: null,
      },
    });
    expect(cleared.json().data.link).toEqual({
      ...bareOf(link),
      title: SECOND.title,
      defaultUrl: SECOND.defaultUrl,
      updatedAt: expect.any(String),
    });
    expectEveryField(await links.findById(link.id));
    expect(JSON.parse(await cachedText(code))).toEqual({ id: link.id, defaultUrl: SECOND.defaultUrl });
  });

  it('keeps the cached record byte for byte as the redirector reads it, keys in their order', async () => {
    const created = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { ...SECOND, socialPreview: undefined, domain: HOSTNAME },
    });
    const link = created.json().data.link;
    // Nested objects come back from jsonb columns, which order keys by length, then bytes.
    expect(await cachedText(codeOf(link.url))).toBe(
      `{"id":"${link.id}","defaultUrl":"https://example.com/summer",` +
        '"androidLink":{"url":"shop://summer","fallbackUrl":"https://example.com/a2","appPackageName":"com.example.summer","minimumVersion":"3"},' +
        '"iosLink":{"url":"shop://summer","ipadUrl":"summerpad://summer","bundleId":"com.example.summer","fallbackUrl":"https://example.com/i2",' +
        '"skipAppPage":false,"ipadBundleId":"com.example.summerpad","minimumVersion":"4.1","ipadFallbackUrl":"https://example.com/ipad2"},' +
        '"desktopUrl":"https://example.com/desktop2","customParameters":{"utm_medium":"ad","utm_campaign":"summer"},' +
        `"expiresAt":${Date.parse(SECOND.expirationDate)},"expiredUrl":"https://example.com/over2",` +
        '"title":"Summer sale","iosApp":{"name":"Summer Shop","appStoreId":"123456"},' +
        '"clickCap":250,"capOverflowUrl":"https://example.com/sold-out-2"}',
    );
  });
});

/** A link's answer with every optional input field removed. */
function bareOf(link: Record<string, unknown>) {
  const bare = { ...link };
  for (const input of Object.keys(SECOND)) if (!['title', 'defaultUrl'].includes(input)) delete bare[input];
  return bare;
}
