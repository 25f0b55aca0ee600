import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Owner');
});
afterAll(() => api.close());

const fullLink = {
  title: 'Spring sale',
  defaultUrl: 'https://example.com/sale',
  androidLink: {
    url: 'shop://sale',
    appPackageName: 'com.example.shop',
    minimumVersion: '2.1.0',
    fallbackUrl: 'https://example.com/android',
  },
  iosLink: { url: 'shop://sale', bundleId: 'com.example.shop', minimumVersion: '3.0', fallbackUrl: 'https://example.com/ios' },
  desktopUrl: 'https://example.com/desktop',
  customParameters: { utm_campaign: 'spring', utm_medium: 'email' },
  expirationDate: '2030-12-31T23:59:59.000Z',
};

async function createLink(token: string, body: object = fullLink) {
  const response = await api.request({ method: 'POST', url: '/api/links', token, payload: body });
  if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
  return response.json().data.link;
}

describe('POST /api/links', () => {
  it('creates a link with a 7-character code on SHORT_URL_BASE and every field returned', async () => {
    const response = await api.request({ method: 'POST', url: '/api/links', token: owner.token, payload: fullLink });
    expect(response.statusCode).toBe(201);
    const { link } = response.json().data;
    expect(link).toEqual({
      ...fullLink,
      id: expect.any(String),
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8080\/[0-9A-Za-z]{7}$/),
      passwordProtected: false,
      createdAt: expect.any(String),
      updatedAt: link.createdAt,
    });
  });

  it('writes the routing record through to Redis', async () => {
    const link = await createLink(owner.token);
    const code = link.url.split('/').pop();
    const cached = JSON.parse((await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`))!);
    expect(cached).toEqual({
      id: link.id,
      defaultUrl: fullLink.defaultUrl,
      androidLink: fullLink.androidLink,
      iosLink: fullLink.iosLink,
      desktopUrl: fullLink.desktopUrl,
      customParameters: fullLink.customParameters,
      expiresAt: Date.parse(fullLink.expirationDate),
      // The iOS page shows it.
      title: fullLink.title,
    });
  });

  it('accepts a bare expiration date as 00:00 UTC of that day', async () => {
    const link = await createLink(owner.token, { title: 't', defaultUrl: 'https://example.com', expirationDate: '2031-02-03' });
    expect(link.expirationDate).toBe('2031-02-03T00:00:00.000Z');
  });

  it('accepts a custom slug and refuses a taken, reserved or malformed one', async () => {
    const link = await createLink(owner.token, { title: 't', defaultUrl: 'https://example.com', slug: 'spring-sale' });
    expect(link.url).toBe('http://127.0.0.1:8080/spring-sale');

    const taken = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { title: 't', defaultUrl: 'https://example.com', slug: 'spring-sale' },
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: [{ field: 'slug', message: 'is already taken' }] });

    for (const slug of ['healthz', 'readyz', 'metrics', 'api', 'API', 'ab', 'has space', 'a/b']) {
      const response = await api.request({
        method: 'POST',
        url: '/api/links',
        token: owner.token,
        payload: { title: 't', defaultUrl: 'https://example.com', slug },
      });
      expect(response.statusCode, slug).toBe(400);
      expect(response.json().error.details[0].field).toBe('slug');
    }
  });

  it('names missing and invalid fields with dotted paths', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: {
        defaultUrl: 'ftp://example.com',
        androidLink: { url: 'shop://x' },
        iosLink: { url: 'shop://x', bundleId: 'com.example', minimumVersion: 'v1' },
        customParameters: { a: 1 },
        expirationDate: 'soon',
        extra: true,
      },
    });
    expect(response.statusCode).toBe(400);
    const fields = response
      .json()
      .error.details.map((d: { field: string }) => d.field)
      .sort();
    expect(fields).toEqual([
      'androidLink.appPackageName',
      'customParameters.a',
      'defaultUrl',
      'expirationDate',
      'extra',
      'iosLink.minimumVersion',
      'title',
    ]);
  });

  it.each([
    ['defaultUrl', { defaultUrl: 'javascript:alert(1)' }],
    ['defaultUrl', { defaultUrl: ' JavaScript:alert(document.cookie)' }],
    ['desktopUrl', { desktopUrl: 'data:text/html,<script>alert(1)</script>' }],
    ['androidLink.url', { androidLink: { url: 'javascript:alert(1)', appPackageName: 'com.example.app' } }],
    ['iosLink.url', { iosLink: { url: 'java\tscript:alert(1)', bundleId: 'com.example.app' } }],
    ['iosLink.fallbackUrl', { iosLink: { url: 'app://x', bundleId: 'com.example.app', fallbackUrl: 'vbscript:msgbox' } }],
    ['iosLink.ipadFallbackUrl', { iosLink: { url: 'app://x', bundleId: 'com.example.app', ipadFallbackUrl: 'myapp://x' } }],
    ['iosLink.ipadUrl', { iosLink: { url: 'app://x', bundleId: 'com.example.app', ipadUrl: 'javascript:x', ipadBundleId: 'a.b' } }],
    ['androidLink.url', { androidLink: { url: 'file:///etc/passwd', appPackageName: 'com.example.app' } }],
  ])('refuses a script or file destination in %s', async (field, override) => {
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { title: 't', defaultUrl: 'https://example.com', ...override },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('refuses an iPad app URL without its bundle id', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: {
        title: 't',
        defaultUrl: 'https://example.com',
        iosLink: { url: 'app://x', bundleId: 'com.example.app', ipadUrl: 'pad://x' },
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'iosLink.ipadBundleId', message: 'ipadUrl and ipadBundleId go together' }]);
  });

  it('stores SQL-looking input verbatim', async () => {
    const title = "Robert'); DROP TABLE links;--";
    const link = await createLink(owner.token, {
      title,
      defaultUrl: "https://example.com/?q=' OR 1=1 --",
      customParameters: { "x'": "'; DELETE FROM users; --" },
    });
    const fetched = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(fetched.json().data.link).toMatchObject({
      title,
      defaultUrl: "https://example.com/?q=' OR 1=1 --",
      customParameters: { "x'": "'; DELETE FROM users; --" },
    });
    const [count] = await api.env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM users`;
    expect(count!.n).toBeGreaterThan(0);
  });
});

describe('GET /api/links/:id', () => {
  it('returns the full link', async () => {
    const link = await createLink(owner.token);
    const response = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, data: { link } });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    for (const id of ['3f2b1c1e-0000-4000-8000-000000000000', 'nope']) {
      const response = await api.request({ method: 'GET', url: `/api/links/${id}`, token: owner.token });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
  });
});

describe("another user's link", () => {
  it('is forbidden on every link route, and stays unchanged', async () => {
    const link = await createLink(owner.token);
    const intruder = await api.registerUser('Intruder');
    const attempts = [
      { method: 'GET', url: `/api/links/${link.id}` },
      { method: 'PUT', url: `/api/links/${link.id}`, payload: { title: 'mine now' } },
      { method: 'DELETE', url: `/api/links/${link.id}` },
    ] as const;
    for (const attempt of attempts) {
      const response = await api.request({ ...attempt, token: intruder.token });
      expect(response.statusCode, attempt.method).toBe(403);
      expect(response.json().error.code).toBe('FORBIDDEN');
    }
    const list = await api.request({ method: 'GET', url: '/api/links', token: intruder.token });
    expect(list.json().data.links).toEqual([]);
    const unchanged = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(unchanged.json().data.link).toEqual(link);
  });
});

describe('PUT /api/links/:id', () => {
  it('changes only the fields sent and moves updatedAt, keeping id and createdAt', async () => {
    const link = await createLink(owner.token);
    const response = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { title: 'Summer sale' },
    });
    expect(response.statusCode).toBe(200);
    const updated = response.json().data.link;
    expect(updated).toEqual({ ...link, title: 'Summer sale', updatedAt: expect.any(String) });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(link.updatedAt));
  });

  it('merges nested objects field by field', async () => {
    const link = await createLink(owner.token);
    const response = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: {
        androidLink: { minimumVersion: '3.0.0' },
        iosLink: { fallbackUrl: 'https://example.com/ios-new' },
        customParameters: { utm_medium: 'sms' },
      },
    });
    expect(response.statusCode).toBe(200);
    const updated = response.json().data.link;
    expect(updated.androidLink).toEqual({ ...fullLink.androidLink, minimumVersion: '3.0.0' });
    expect(updated.iosLink).toEqual({ ...fullLink.iosLink, fallbackUrl: 'https://example.com/ios-new' });
    expect(updated.customParameters).toEqual({ utm_campaign: 'spring', utm_medium: 'sms' });
  });

  it('clears optional fields sent as null, nested ones included', async () => {
    const link = await createLink(owner.token);
    const response = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: {
        desktopUrl: null,
        expirationDate: null,
        iosLink: null,
        androidLink: { fallbackUrl: null },
        customParameters: { utm_medium: null },
      },
    });
    expect(response.statusCode).toBe(200);
    const updated = response.json().data.link;
    expect(updated).not.toHaveProperty('desktopUrl');
    expect(updated).not.toHaveProperty('expirationDate');
    expect(updated).not.toHaveProperty('iosLink');
    expect(updated.androidLink).toEqual({ url: 'shop://sale', appPackageName: 'com.example.shop', minimumVersion: '2.1.0' });
    expect(updated.customParameters).toEqual({ utm_campaign: 'spring' });
    const fetched = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(fetched.json().data.link).toEqual(updated);
  });

  it('refuses null for required fields and a new nested object without its required fields', async () => {
    const link = await createLink(owner.token, { title: 'plain', defaultUrl: 'https://example.com' });
    const nulls = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { title: null, defaultUrl: null },
    });
    expect(nulls.statusCode).toBe(400);
    expect(
      nulls
        .json()
        .error.details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['defaultUrl', 'title']);

    const partial = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { androidLink: { url: 'app://x' } },
    });
    expect(partial.statusCode).toBe(400);
    expect(partial.json().error.details).toEqual([{ field: 'androidLink.appPackageName', message: expect.any(String) }]);

    const readOnly = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { id: 'x', slug: 'new-slug' },
    });
    expect(readOnly.statusCode).toBe(400);
    expect(
      readOnly
        .json()
        .error.details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['id', 'slug']);

    const unchanged = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(unchanged.json().data.link).toEqual(link);
  });

  it('writes the change through to Redis', async () => {
    const link = await createLink(owner.token);
    await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { defaultUrl: 'https://example.org/new', desktopUrl: null },
    });
    const code = link.url.split('/').pop();
    const cached = JSON.parse((await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`))!);
    expect(cached.defaultUrl).toBe('https://example.org/new');
    expect(cached).not.toHaveProperty('desktopUrl');
  });
});

describe('DELETE /api/links/:id', () => {
  it('deletes the link and its cached routing record', async () => {
    const link = await createLink(owner.token);
    const code = link.url.split('/').pop();
    const response = await api.request({ method: 'DELETE', url: `/api/links/${link.id}`, token: owner.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, data: null });
    expect((await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token })).statusCode).toBe(404);
    expect(await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`)).toBeNull();
    expect((await api.request({ method: 'DELETE', url: `/api/links/${link.id}`, token: owner.token })).statusCode).toBe(404);
  });
});

describe('GET /api/links', () => {
  let lister: { token: string };
  const titles = ['delta', 'alpha', 'echo', 'charlie', 'bravo'];
  beforeAll(async () => {
    lister = await api.registerUser('Lister');
    for (const title of titles)
      await createLink(lister.token, { title, defaultUrl: `https://${title}.example.com`, desktopUrl: 'https://d.example.com' });
  });

  it('pages with defaults page 1, limit 10, newest first, without platform fields', async () => {
    const response = await api.request({ method: 'GET', url: '/api/links', token: lister.token });
    expect(response.statusCode).toBe(200);
    const { links, pagination } = response.json().data;
    expect(pagination).toEqual({ total: 5, page: 1, limit: 10, pages: 1 });
    expect(links.map((l: { title: string }) => l.title)).toEqual([...titles].reverse());
    for (const link of links) expect(Object.keys(link).sort()).toEqual(['createdAt', 'defaultUrl', 'id', 'title', 'updatedAt', 'url']);
  });

  it('sorts by an allowed field in either direction and pages through', async () => {
    const page1 = await api.request({
      method: 'GET',
      url: '/api/links?sortBy=title&sortDirection=asc&limit=2&page=1',
      token: lister.token,
    });
    const page3 = await api.request({
      method: 'GET',
      url: '/api/links?sortBy=title&sortDirection=asc&limit=2&page=3',
      token: lister.token,
    });
    expect(page1.json().data.links.map((l: { title: string }) => l.title)).toEqual(['alpha', 'bravo']);
    expect(page3.json().data.links.map((l: { title: string }) => l.title)).toEqual(['echo']);
    expect(page3.json().data.pagination).toEqual({ total: 5, page: 3, limit: 2, pages: 3 });
    const desc = await api.request({ method: 'GET', url: '/api/links?sortBy=defaultUrl&sortDirection=desc', token: lister.token });
    expect(desc.json().data.links[0].title).toBe('echo');
    const beyond = await api.request({ method: 'GET', url: '/api/links?page=9', token: lister.token });
    expect(beyond.json().data).toEqual({ links: [], pagination: { total: 5, page: 9, limit: 10, pages: 1 } });
  });

  it('sorts titles as people read them, whatever the database locale, and pages through equal titles without gaps or repeats', async () => {
    // Test databases are created with the C locale (byte order: "Banana" before "apple").
    const [database] = await api.env.sql<{ datcollate: string }[]>`SELECT datcollate FROM pg_database WHERE datname = current_database()`;
    expect(database?.datcollate).toMatch(/^(C|POSIX)(\.|$)/);
    const reader = await api.registerUser('Reader');
    const created = ['zebra', 'Banana', 'apple', 'Éclair', 'banana', 'Apple', 'cherry', 'same', 'same', 'same'];
    for (const title of created) await createLink(reader.token, { title, defaultUrl: 'https://example.com/' });
    const page = async (n: number, direction = 'asc') =>
      (
        await api.request({
          method: 'GET',
          url: `/api/links?sortBy=title&sortDirection=${direction}&limit=3&page=${n}`,
          token: reader.token,
        })
      ).json().data.links as { id: string; title: string }[];
    const pages = [...(await page(1)), ...(await page(2)), ...(await page(3)), ...(await page(4))];
    expect(pages.map((link) => link.title)).toEqual([
      'apple',
      'Apple',
      'banana',
      'Banana',
      'cherry',
      'Éclair',
      'same',
      'same',
      'same',
      'zebra',
    ]);
    expect(new Set(pages.map((link) => link.id)).size).toBe(created.length);
    const descending = [...(await page(1, 'desc')), ...(await page(2, 'desc')), ...(await page(3, 'desc')), ...(await page(4, 'desc'))];
    expect(descending.map((link) => link.id)).toEqual(pages.map((link) => link.id).reverse());
  });

  it.each([
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['sortBy=password', 'sortBy'],
    ['sortBy=title;DROP TABLE links', 'sortBy'],
    ['sortDirection=up', 'sortDirection'],
    ['color=red', 'color'],
  ])('refuses %s with details naming %s', async (query, field) => {
    const response = await api.request({ method: 'GET', url: `/api/links?${query}`, token: lister.token });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: [{ field }] });
  });

  it('needs authentication', async () => {
    expect((await api.request({ method: 'GET', url: '/api/links' })).statusCode).toBe(401);
  });
});
