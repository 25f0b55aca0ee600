import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Tagger');
});
afterAll(() => api.close());

async function createLink(token: string, body: Record<string, unknown>) {
  const response = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { defaultUrl: 'https://example.com/x', ...body },
  });
  if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
  return response.json().data.link;
}

const list = async (token: string, query: string) => {
  const response = await api.request({ method: 'GET', url: `/api/links?${query}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as { links: Record<string, unknown>[]; pagination: Record<string, number> };
};

describe('tags on a link', () => {
  it('are lower-cased and de-duplicated on create, returned with the link, and absent when there are none', async () => {
    const link = await createLink(owner.token, { title: 'Tagged', tags: ['Spring', 'email', 'spring', ' EMAIL '] });
    expect(link.tags).toEqual(['spring', 'email']);
    const read = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(read.json().data.link.tags).toEqual(['spring', 'email']);
    const plain = await createLink(owner.token, { title: 'Untagged' });
    expect(plain).not.toHaveProperty('tags');
  });

  it('refuses bad tags, naming each one', async () => {
    const cases: [unknown, string][] = [
      [['ok', 'no spaces'], 'tags.1'],
      [['ok', ''], 'tags.1'],
      [['x'.repeat(33)], 'tags.0'],
      [['émoji'], 'tags.0'],
      [[7], 'tags.0'],
      ['spring', 'tags'],
      [Array.from({ length: 11 }, (_, i) => `t${i}`), 'tags'],
    ];
    for (const [tags, field] of cases) {
      const response = await api.request({
        method: 'POST',
        url: '/api/links',
        token: owner.token,
        payload: { title: 't', defaultUrl: 'https://example.com', tags },
      });
      expect(response.statusCode, JSON.stringify(tags)).toBe(400);
      expect(response.json().error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    // Eleven entries that are ten different tags are fine.
    const ten = Array.from({ length: 10 }, (_, i) => `t${i}`);
    expect((await createLink(owner.token, { title: 't', tags: [...ten, 'T0'] })).tags).toEqual(ten);
  });

  it('are replaced as a whole by PUT, kept when omitted, and cleared by null', async () => {
    const link = await createLink(owner.token, { title: 'Replace me', tags: ['a', 'b'] });
    const put = (payload: object) => api.request({ method: 'PUT', url: `/api/links/${link.id}`, token: owner.token, payload });
    expect((await put({ title: 'Renamed' })).json().data.link.tags).toEqual(['a', 'b']);
    expect((await put({ tags: ['C', 'd'] })).json().data.link.tags).toEqual(['c', 'd']);
    const bad = await put({ tags: ['bad tag'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].field).toBe('tags.0');
    const cleared = (await put({ tags: null })).json().data.link;
    expect(cleared).not.toHaveProperty('tags');
    expect((await put({ tags: ['e'] })).json().data.link.tags).toEqual(['e']);
    expect((await put({ tags: [] })).json().data.link).not.toHaveProperty('tags');
  });
});

describe('GET /links with tag, q and include', () => {
  let user: { token: string };
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    user = await api.registerUser('Campaigns');
    const specs = [
      ['Spring sale email', 'https://shop.example.com/spring', ['spring', 'email']],
      ['Spring sale social', 'https://shop.example.com/spring?c=social', ['spring', 'social']],
      ['Spring banner', 'https://ads.example.com/banner', ['spring', 'email', 'banner']],
      ['Autumn SALE', 'https://shop.example.com/autumn', ['autumn', 'email']],
      ['Plain 100%_off', 'https://example.com/plain', []],
    ] as const;
    for (const [title, defaultUrl, tags] of specs) ids[title] = (await createLink(user.token, { title, defaultUrl, tags })).id;
    // Another account's links never show up.
    const other = await api.registerUser('Other');
    await createLink(other.token, { title: 'Spring sale elsewhere', tags: ['spring', 'email'] });
  });

  const titles = (page: { links: Record<string, unknown>[] }) => page.links.map((link) => link.title);

  it('keeps list items exactly as SPEC lists them without include', async () => {
    const page = await list(user.token, 'limit=1');
    expect(Object.keys(page.links[0]!).sort()).toEqual(['createdAt', 'defaultUrl', 'id', 'title', 'updatedAt', 'url']);
  });

  it('filters by one tag, and by several (all must match), sorted and paged', async () => {
    const spring = await list(user.token, 'tag=spring&sortBy=title&sortDirection=asc');
    expect(titles(spring)).toEqual(['Spring banner', 'Spring sale email', 'Spring sale social']);
    expect(spring.pagination).toEqual({ total: 3, page: 1, limit: 10, pages: 1 });

    const both = await list(user.token, 'tag=spring&tag=EMAIL&sortBy=title&sortDirection=asc');
    expect(titles(both)).toEqual(['Spring banner', 'Spring sale email']);
    expect(titles(await list(user.token, 'tag=spring,email&sortBy=title&sortDirection=asc'))).toEqual(titles(both));

    const paged = await list(user.token, 'tag=email&sortBy=title&sortDirection=asc&limit=2&page=2');
    expect(titles(paged)).toEqual(['Spring sale email']);
    expect(paged.pagination).toEqual({ total: 3, page: 2, limit: 2, pages: 2 });

    expect((await list(user.token, 'tag=spring&tag=autumn')).pagination.total).toBe(0);
    expect((await list(user.token, 'tag=nosuchtag')).links).toEqual([]);
  });

  it('searches title, defaultUrl and short code, case-insensitively, literally, with tags and paging', async () => {
    expect(titles(await list(user.token, 'q=SALE&sortBy=title&sortDirection=asc'))).toEqual([
      'Autumn SALE',
      'Spring sale email',
      'Spring sale social',
    ]);
    expect(titles(await list(user.token, 'q=ads.example&sortBy=title'))).toEqual(['Spring banner']);
    expect(titles(await list(user.token, 'q=sale&tag=email&sortBy=title&sortDirection=asc'))).toEqual(['Autumn SALE', 'Spring sale email']);
    // % and _ are literal characters, not wildcards.
    expect(titles(await list(user.token, `q=${encodeURIComponent('100%_')}`))).toEqual(['Plain 100%_off']);
    expect((await list(user.token, `q=${encodeURIComponent('%')}`)).pagination.total).toBe(1);
    const page = await list(user.token, 'q=spring&sortBy=title&sortDirection=desc&limit=1&page=3');
    expect(titles(page)).toEqual(['Spring banner']);
    expect(page.pagination).toMatchObject({ total: 3, pages: 3 });
    // The short code is searched too.
    const some = await api.request({ method: 'GET', url: `/api/links/${ids['Spring banner']}`, token: user.token });
    const code = some.json().data.link.url.split('/').pop();
    expect(titles(await list(user.token, `q=${code}`))).toEqual(['Spring banner']);
    // An empty search is no search.
    expect((await list(user.token, 'q=%20')).pagination.total).toBe(5);
  });

  it('refuses bad filters, naming the parameter', async () => {
    for (const [query, field] of [
      ['tag=bad%20tag', 'tag.0'],
      ['include=clicks,views', 'include.1'],
      [`q=${'x'.repeat(201)}`, 'q'],
    ]) {
      const response = await api.request({ method: 'GET', url: `/api/links?${query}`, token: user.token });
      expect(response.statusCode, query).toBe(400);
      expect(response.json().error.details[0].field, query).toBe(field);
    }
  });

  it('adds tags on request, [] for links without', async () => {
    const page = await list(user.token, 'include=tags&sortBy=title&sortDirection=asc');
    expect(page.links.map((link) => link.tags)).toEqual([
      ['autumn', 'email'],
      [],
      ['spring', 'email', 'banner'],
      ['spring', 'email'],
      ['spring', 'social'],
    ]);
    expect(page.links[0]).not.toHaveProperty('clicks');
  });
});

describe('include=clicks', () => {
  it('counts all-time clicks per link from the rollups', async () => {
    const user = await api.registerUser('Clicks');
    const busy = await createLink(user.token, { title: 'Busy', tags: ['x'] });
    const quiet = await createLink(user.token, { title: 'Quiet' });
    await recordClicks(api.env.sql, [
      ...Array.from({ length: 7 }, (_, i) => rollupClick(busy.id, Date.now() - i * 3_600_000)),
      rollupClick(busy.id, '2025-01-05T10:00:00Z'),
    ]);
    const page = await list(user.token, 'include=clicks,tags&sortBy=title&sortDirection=asc');
    expect(page.links.map(({ title, clicks, tags }) => ({ title, clicks, tags }))).toEqual([
      { title: 'Busy', clicks: 8, tags: ['x'] },
      { title: 'Quiet', clicks: 0, tags: [] },
    ]);
    const summary = await api.request({ method: 'GET', url: '/api/analytics/summary', token: user.token });
    expect(summary.json().data.summary.totalClicks).toBe(8);
    expect(quiet.id).toBeDefined();
  });
});

describe('sortBy=clicks and include=expiry', () => {
  it('orders by all-time clicks, ties by id, and tells each link its expiry when asked', async () => {
    const user = await api.registerUser('Sorted by clicks');
    const one = await createLink(user.token, { title: 'One click', expirationDate: '2030-01-02T03:04:00.000Z' });
    const three = await createLink(user.token, { title: 'Three clicks' });
    const none = await createLink(user.token, { title: 'No clicks' });
    await recordClicks(api.env.sql, [
      rollupClick(one.id, Date.now()),
      ...Array.from({ length: 3 }, (_, i) => rollupClick(three.id, Date.now() - i * 3_600_000)),
    ]);
    const descending = await list(user.token, 'sortBy=clicks&include=clicks,expiry');
    expect(descending.links.map(({ title, clicks }) => ({ title, clicks }))).toEqual([
      { title: 'Three clicks', clicks: 3 },
      { title: 'One click', clicks: 1 },
      { title: 'No clicks', clicks: 0 },
    ]);
    expect(descending.links.map((link) => link.expirationDate)).toEqual([undefined, '2030-01-02T03:04:00.000Z', undefined]);
    const ascending = await list(user.token, 'sortBy=clicks&sortDirection=asc');
    expect(ascending.links.map((link) => link.id)).toEqual([none.id, one.id, three.id]);
    expect(ascending.links[0]).not.toHaveProperty('expirationDate');
  });
});

describe('GET /tags', () => {
  it("lists the caller's tags with link counts, by name", async () => {
    const user = await api.registerUser('Tag counts');
    expect((await api.request({ method: 'GET', url: '/api/tags', token: user.token })).json()).toEqual({
      success: true,
      data: { tags: [] },
    });
    await createLink(user.token, { title: 'a', tags: ['spring', 'email'] });
    await createLink(user.token, { title: 'b', tags: ['spring'] });
    await createLink(user.token, { title: 'c' });
    const other = await api.registerUser();
    await createLink(other.token, { title: 'x', tags: ['spring', 'other'] });
    const response = await api.request({ method: 'GET', url: '/api/tags', token: user.token });
    expect(response.json().data.tags).toEqual([
      { name: 'email', links: 1 },
      { name: 'spring', links: 2 },
    ]);
    expect((await api.request({ method: 'GET', url: '/api/tags' })).statusCode).toBe(401);
  });
});
