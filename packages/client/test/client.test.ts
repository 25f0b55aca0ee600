import { randomUUID } from 'node:crypto';
import { rollupsRepository } from '@deeplink/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConflictError,
  createClient,
  ServiceAuthError,
  ServiceError,
  ServiceForbiddenError,
  ServiceValidationError,
  type DeeplinkClient,
  type Link,
} from '../src/index.js';
import { newAccount, startApiWithEnvironment } from './support/api-process.js';

let world: Awaited<ReturnType<typeof startApiWithEnvironment>>;
let client: DeeplinkClient;
let baseUrl: string;

beforeAll(async () => {
  world = await startApiWithEnvironment();
  baseUrl = world.api.baseUrl;
  client = createClient({ baseUrl });
});
afterAll(() => world?.close());

const linkInput = {
  title: 'Spring sale',
  defaultUrl: 'https://example.com/spring',
  androidLink: { url: 'myapp://sale', appPackageName: 'com.example.app', minimumVersion: '2.1' },
  iosLink: { url: 'myapp://sale', bundleId: 'com.example.app' },
  desktopUrl: 'https://example.com/desktop',
  customParameters: { utm_campaign: 'spring', utm_medium: 'email' },
};

describe('auth', () => {
  it('registers, remembers the token, and reads the user back', async () => {
    const account = newAccount('Ada');
    const result = await client.auth.register(account);
    expect(result.user).toMatchObject({ name: 'Ada', email: account.email });
    expect(result.token).toMatch(/^ey/);
    expect(await client.auth.me()).toEqual(result.user);
  });

  it('logs in with the same credentials on a fresh client', async () => {
    const account = newAccount();
    const { user } = await createClient({ baseUrl }).auth.register(account);
    const fresh = createClient({ baseUrl });
    await expect(fresh.auth.me()).rejects.toBeInstanceOf(ServiceAuthError);
    const login = await fresh.auth.login({ email: account.email, password: account.password });
    expect(login.user).toEqual(user);
    expect(await fresh.auth.me()).toEqual(user);
    // A token passed to createClient works the same way.
    expect(await createClient({ baseUrl, token: login.token }).auth.me()).toEqual(user);
  });

  it('changes the password (keeping its own session) and logs out everywhere', async () => {
    const account = newAccount();
    const mine = createClient({ baseUrl });
    await mine.auth.register(account);
    const other = createClient({ baseUrl });
    await other.auth.login({ email: account.email, password: account.password });

    await mine.auth.changePassword({ currentPassword: account.password, newPassword: 'a brand new password' });
    expect((await mine.auth.me()).email).toBe(account.email);
    await expect(other.auth.me()).rejects.toBeInstanceOf(ServiceAuthError);

    await mine.auth.logoutAll();
    await expect(mine.auth.me()).rejects.toBeInstanceOf(ServiceAuthError);
  });
});

describe('API keys', () => {
  it('creates a key that authenticates, and revokes it', async () => {
    const owner = createClient({ baseUrl });
    const { user } = await owner.auth.register(newAccount());
    const apiKey = await owner.apiKeys.create({ name: 'ci' });
    expect(apiKey).toMatchObject({ name: 'ci', id: expect.any(String), key: expect.any(String) });
    expect(new Date(apiKey.createdAt).toISOString()).toBe(apiKey.createdAt);

    const keyed = createClient({ baseUrl, apiKey: apiKey.key });
    expect(await keyed.auth.me()).toEqual(user);
    // An API key may not manage keys: 403, a ServiceForbiddenError, which is an auth error too.
    const forbidden = await keyed.apiKeys.create({ name: 'nested' }).catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(ServiceForbiddenError);
    expect(forbidden).toBeInstanceOf(ServiceAuthError);
    expect(forbidden).toMatchObject({ name: 'ServiceForbiddenError', status: 403, code: 'FORBIDDEN' });

    await expect(owner.apiKeys.delete(apiKey.id)).resolves.toBeUndefined();
    await expect(keyed.auth.me()).rejects.toMatchObject({ name: 'ServiceAuthError', status: 401, code: 'UNAUTHORIZED' });
  });
});

describe('webhooks', () => {
  it('creates an endpoint with its secret shown once, changes it, rotates the secret and reads its delivery log', async () => {
    const owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
    const created = await owner.webhooks.create({ url: 'https://hooks.example.com/in', events: ['link.created', 'click'] });
    expect(created).toMatchObject({ url: 'https://hooks.example.com/in', events: ['link.created', 'click'], enabled: true });
    expect(created.secret).toMatch(/^whsec_/);
    expect(await owner.webhooks.list()).toEqual([expect.not.objectContaining({ secret: expect.anything() })]);
    const updated = await owner.webhooks.update(created.id, { enabled: false, description: 'Orders' });
    expect(updated).toMatchObject({ enabled: false, description: 'Orders' });
    expect(await owner.webhooks.get(created.id)).toEqual(updated);
    const rotated = await owner.webhooks.rotateSecret(created.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previousSecretExpiresAt).toBeDefined();
    expect(await owner.webhooks.deliveries(created.id, { limit: 5 })).toEqual({
      deliveries: [],
      pagination: { total: 0, page: 1, limit: 5, pages: 0 },
    });
    await expect(owner.webhooks.resend(created.id, randomUUID())).rejects.toMatchObject({ name: 'NotFoundError', status: 404 });
    await expect(owner.webhooks.create({ url: 'ftp://hooks.example.com', events: ['click'] })).rejects.toMatchObject({
      name: 'ServiceValidationError',
      details: [{ field: 'url', message: 'must be an absolute http:// or https:// URL' }],
    });
    await owner.webhooks.delete(created.id);
    expect(await owner.webhooks.list()).toEqual([]);
  });
});

describe('apps', () => {
  it('creates an app with its key shown once, lists the prefix only, and rotates the key', async () => {
    const owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
    const app = await owner.apps.create({ platform: 'ios', name: 'Acme Shop', teamId: 'ABCDE12345', bundleId: 'com.acme.shop' });
    expect(app.key).toMatch(/^dla_/);
    const [listed] = await owner.apps.list();
    expect(listed).toMatchObject({ id: app.id, keyPrefix: app.key.slice(0, 12), keyCreatedAt: app.keyCreatedAt });
    expect(listed).not.toHaveProperty('key');

    const rotated = await owner.apps.rotateKey(app.id);
    expect(rotated).toMatchObject({ id: app.id, name: 'Acme Shop', keyPrefix: rotated.key.slice(0, 12) });
    expect(rotated.key).not.toBe(app.key);
    expect((await owner.apps.list())[0]!.keyPrefix).toBe(rotated.keyPrefix);
    // The app key is no API credential: a client built on it is refused.
    await expect(createClient({ baseUrl, apiKey: rotated.key }).auth.me()).rejects.toMatchObject({ status: 401 });
  });

  it('turns the probabilistic install match on, off by default, and refuses a window out of bounds', async () => {
    const owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
    const app = await owner.apps.create({
      platform: 'android',
      packageName: 'com.acme.match',
      sha256CertFingerprints: [Array(32).fill('AB').join(':')],
    });
    expect(app).toMatchObject({ fingerprintMatching: false, fingerprintWindowMinutes: 120 });
    const updated = await owner.apps.update(app.id, { fingerprintMatching: true, fingerprintWindowMinutes: 30 });
    expect(updated).toMatchObject({ id: app.id, fingerprintMatching: true, fingerprintWindowMinutes: 30 });
    expect(updated).not.toHaveProperty('key');
    expect((await owner.apps.list())[0]).toMatchObject({ fingerprintMatching: true, fingerprintWindowMinutes: 30 });
    await expect(owner.apps.update(app.id, { fingerprintWindowMinutes: 2000 })).rejects.toMatchObject({
      status: 400,
      code: 'INVALID_REQUEST',
    });
  });
});

describe('links', () => {
  let owner: DeeplinkClient;
  beforeAll(async () => {
    owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
  });

  it('creates, reads, updates (merging) and deletes a link', async () => {
    const created = await owner.links.create({ ...linkInput, expirationDate: new Date('2030-01-01T00:00:00Z') });
    expect(created).toMatchObject({ ...linkInput, expirationDate: '2030-01-01T00:00:00.000Z' });
    expect(created.url).toMatch(/^https?:\/\/.+\/[A-Za-z0-9]{7}$/);
    expect(await owner.links.get(created.id)).toEqual(created);

    const updated = await owner.links.update(created.id, {
      title: 'Summer sale',
      androidLink: { minimumVersion: '3.0' },
      desktopUrl: null,
      customParameters: { utm_medium: null, utm_source: 'newsletter' },
    });
    expect(updated).toMatchObject({
      id: created.id,
      title: 'Summer sale',
      defaultUrl: linkInput.defaultUrl,
      androidLink: { ...linkInput.androidLink, minimumVersion: '3.0' },
      iosLink: linkInput.iosLink,
      customParameters: { utm_campaign: 'spring', utm_source: 'newsletter' },
      createdAt: created.createdAt,
    });
    expect(updated.desktopUrl).toBeUndefined();
    expect(updated.updatedAt > created.updatedAt).toBe(true);

    await expect(owner.links.delete(created.id)).resolves.toBeUndefined();
    const gone = await owner.links.get(created.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ServiceError);
    expect(gone).toMatchObject({ name: 'NotFoundError', status: 404, code: 'NOT_FOUND' });
  });

  it('fetches the QR code as SVG text or a PNG Blob, and refuses a bad size naming the field', async () => {
    const link = await owner.links.create({ title: 'QR', defaultUrl: 'https://example.com/qr' });
    expect(await owner.links.qr(link.id)).toMatch(/^<svg/);
    const png = await owner.links.qr(link.id, { format: 'png', size: 128 });
    expect(png.type).toBe('image/png');
    expect([...new Uint8Array(await png.arrayBuffer()).slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    const error = await owner.links.qr(link.id, { format: 'png', size: 5 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect((error as ServiceValidationError).details.map((detail) => detail.field)).toEqual(['size']);
  });

  it('draws the QR code in colours and with a logo, which must be a PNG', async () => {
    const link = await owner.links.create({ title: 'Branded QR', defaultUrl: 'https://example.com/qr' });
    expect(await owner.links.qr(link.id, { color: '#1b3a6b' })).toContain('stroke="#1b3a6b"');
    // The smallest PNG: one transparent pixel.
    const logo = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    expect(await owner.links.qrWithLogo(link.id, { logo })).toContain(`base64,${logo}`);
    const png = await owner.links.qrWithLogo(link.id, { logo, format: 'png', size: 256 });
    expect(png.type).toBe('image/png');
    const refused = await owner.links.qrWithLogo(link.id, { logo: 'R0lGODlhAQABAAAAACw=' }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(ServiceValidationError);
    expect((refused as ServiceValidationError).details.map((detail) => detail.field)).toEqual(['logo']);
  });

  it('takes a custom slug and refuses it twice with a validation error', async () => {
    const slug = `s-${Date.now()}`;
    const link = await owner.links.create({ title: 'Slugged', defaultUrl: 'https://example.com', slug });
    expect(link.url.endsWith(`/${slug}`)).toBe(true);
    const taken = await owner.links.create({ title: 'Again', defaultUrl: 'https://example.com', slug }).catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(ServiceValidationError);
    expect(taken).toMatchObject({ status: 409, code: 'INVALID_REQUEST' });
  });

  it('lists a page with pagination and sorting', async () => {
    const lister = createClient({ baseUrl });
    await lister.auth.register(newAccount());
    for (const title of ['b', 'a', 'c']) await lister.links.create({ title, defaultUrl: 'https://example.com' });
    const page = await lister.links.list({ limit: 2, sortBy: 'title', sortDirection: 'asc' });
    expect(page.links.map((l) => l.title)).toEqual(['a', 'b']);
    expect(page.pagination).toEqual({ total: 3, page: 1, limit: 2, pages: 2 });
    expect(Object.keys(page.links[0]!).sort()).toEqual(['createdAt', 'defaultUrl', 'id', 'title', 'updatedAt', 'url']);
    const second = await lister.links.list({ page: 2, limit: 2, sortBy: 'title', sortDirection: 'asc' });
    expect(second.links.map((l) => l.title)).toEqual(['c']);
  });

  it('iterates over 25 links 10 at a time: 3 lazy page requests, 25 distinct ids', async () => {
    const pages: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      const url = new URL(String(input));
      if (url.pathname.endsWith('/links') && (init?.method ?? 'GET') === 'GET') pages.push(url.searchParams.get('page') ?? '');
      return fetch(input, init);
    };
    const iterating = createClient({ baseUrl, fetch: countingFetch });
    await iterating.auth.register(newAccount());
    const created = new Set<string>();
    for (let i = 0; i < 25; i++) created.add((await iterating.links.create({ title: `link ${i}`, defaultUrl: 'https://example.com' })).id);

    const seen: string[] = [];
    for await (const link of iterating.links.iterate({ limit: 10 })) {
      seen.push(link.id);
      // Lazy: the second page is fetched only when the loop gets past the first ten.
      if (seen.length === 10) expect(pages).toEqual(['1']);
    }
    expect(pages).toEqual(['1', '2', '3']);
    expect(seen).toHaveLength(25);
    expect(new Set(seen)).toEqual(created);
  });

  it('iterates over nothing without error', async () => {
    const empty = createClient({ baseUrl });
    await empty.auth.register(newAccount());
    const seen = [];
    for await (const link of empty.links.iterate()) seen.push(link);
    expect(seen).toEqual([]);
  });
});

describe('links.createMany', () => {
  it('creates links together, or none of them', async () => {
    const owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
    const created = await owner.links.createMany([
      { ...linkInput, tags: ['spring'] },
      { title: 'Second', defaultUrl: 'https://example.com/2', slug: `s-${randomUUID().slice(0, 8)}` },
    ]);
    expect(created.map((link) => link.title)).toEqual(['Spring sale', 'Second']);
    expect(await owner.links.get(created[1]!.id)).toEqual(created[1]);

    const invalid = await owner.links
      .createMany([
        { title: 'Ok', defaultUrl: 'https://example.com' },
        { title: 'Bad', defaultUrl: 'ftp://x' },
      ])
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ServiceValidationError);
    expect((invalid as ServiceValidationError).details).toEqual([expect.objectContaining({ field: 'links.1.defaultUrl' })]);
    const taken = await owner.links
      .createMany([{ title: 'Again', defaultUrl: 'https://example.com', slug: created[1]!.url.split('/').pop() }])
      .catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(ConflictError);
    expect((await owner.links.list()).pagination.total).toBe(2);
  });
});

describe('imports', () => {
  it('creates an import, uploads its CSV, reads its progress and its report', async () => {
    const owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
    const code = `im-${randomUUID().slice(0, 8)}`;
    const created = await owner.imports.create({ format: 'yourls' });
    expect(created).toMatchObject({ format: 'yourls', status: 'waiting', dryRun: false, rows: 0 });
    const file = `keyword,url,title\n${code},https://example.com/imported,Imported\nx,https://example.com/,Too short\n`;
    const done = await owner.imports.upload(created.id, new Blob([file]));
    expect(done).toMatchObject({ status: 'done', rows: 2, created: 1, refused: 1, bytesRead: file.length, totalBytes: file.length });
    expect(await owner.imports.get(created.id)).toEqual(done);
    const refused = await owner.imports.rows(created.id, { outcome: 'refused' });
    expect(refused.rows).toEqual([{ line: 3, outcome: 'refused', errors: [expect.objectContaining({ field: 'keyword' })] }]);
    expect((await owner.links.list({ q: code })).links[0]).toMatchObject({ title: 'Imported', defaultUrl: 'https://example.com/imported' });
    const again = await owner.imports.upload(created.id, file).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConflictError);
  });
});

describe('analytics', () => {
  let owner: DeeplinkClient;
  let clicked: Link;
  let quiet: Link;
  const hour = (iso: string) => Date.parse(iso);

  beforeAll(async () => {
    owner = createClient({ baseUrl });
    await owner.auth.register(newAccount());
    clicked = await owner.links.create({ title: 'Clicked', defaultUrl: 'https://example.com/a' });
    quiet = await owner.links.create({ title: 'Quiet', defaultUrl: 'https://example.com/b', expirationDate: '2020-01-01' });
    // Clicks rolled up the way the worker stores them: 3 on 1 March (2 visitors), 2 on 2 March (1 visitor).
    const clicks = (bucket: number, visitors: string[], browser: string) =>
      visitors.map((visitor) => ({
        linkId: clicked.id,
        bucket,
        visitor,
        dimensions: { platform: 'desktop', country: 'US', browser, os: 'Windows', device: 'Desktop', referrer: 'direct' },
      }));
    await rollupsRepository(world.environment.sql).recordBatch({
      batchId: randomUUID(),
      receivedClicks: 5,
      clicks: [
        ...clicks(hour('2025-03-01T10:00:00Z'), ['v1', 'v2', 'v1'], 'Chrome'),
        ...clicks(hour('2025-03-02T05:00:00Z'), ['v1', 'v1'], 'Firefox'),
      ],
    });
  });

  it("reports a link's clicks over a range, Dates sent as ISO strings", async () => {
    const report = await owner.analytics.link(clicked.id, {
      startDate: new Date('2025-03-01T00:00:00Z'),
      endDate: '2025-03-03',
      timeBucket: 'day',
    });
    expect(report).toMatchObject({
      totalClicks: 5,
      uniqueClicks: 2,
      platforms: { desktop: 5 },
      countries: { US: 5 },
      browsers: { Chrome: 3, Firefox: 2 },
      devices: { Desktop: 5 },
      timeSeries: [
        { date: '2025-03-01T00:00:00.000Z', clicks: 3, uniqueClicks: 2 },
        { date: '2025-03-02T00:00:00.000Z', clicks: 2, uniqueClicks: 1 },
        { date: '2025-03-03T00:00:00.000Z', clicks: 0, uniqueClicks: 0 },
      ],
      range: { startDate: '2025-03-01T00:00:00.000Z', endDate: '2025-03-04T00:00:00.000Z', timeBucket: 'day' },
    });
    // Defaults: the last 30 days by day, zero-filled.
    const recent = await owner.analytics.link(clicked.id);
    expect(recent.range.timeBucket).toBe('day');
    expect(recent.totalClicks).toBe(0);
    expect(recent.timeSeries.length).toBeGreaterThanOrEqual(30);
  });

  it('refuses a bad range with a validation error naming the field', async () => {
    const error = await owner.analytics.link(clicked.id, { startDate: '2025-03-05', endDate: '2025-03-01' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect((error as ServiceValidationError).details).toEqual([expect.objectContaining({ field: 'startDate' })]);
  });

  it('takes a time zone and gives unique clicks per bucket', async () => {
    // New York days start at 05:00 UTC: the clicks of 2 March 05:00 UTC are on 2 March there, those of 1 March 04:00 UTC would not be.
    const report = await owner.analytics.link(clicked.id, { startDate: '2025-03-01', endDate: '2025-03-02', timezone: 'America/New_York' });
    // No app events: each bucket says so, every event 0.
    const none = { REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 };
    const noEvents = { ...none, uniques: none };
    expect(report.timeSeries).toEqual([
      { date: '2025-03-01T05:00:00.000Z', clicks: 3, uniqueClicks: 2, appEvents: noEvents },
      { date: '2025-03-02T05:00:00.000Z', clicks: 2, uniqueClicks: 1, appEvents: noEvents },
    ]);
    const error = await owner.analytics.link(clicked.id, { timezone: 'Asia/Kolkata' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect((error as ServiceValidationError).details[0]!.field).toBe('timezone');
  });

  it('summarises the account', async () => {
    expect(await owner.analytics.summary()).toEqual({
      totalLinks: 2,
      totalClicks: 5,
      activeLinks: 1,
      topLinks: expect.arrayContaining([{ id: clicked.id, title: 'Clicked', clicks: 5 }]),
      appEventsFiltered: true,
    });
  });

  it('sends filters, a list as a repeated parameter', async () => {
    const range = { startDate: '2025-03-01', endDate: '2025-03-03' };
    const firefox = await owner.analytics.link(clicked.id, { ...range, browser: ['Firefox', 'Edge'], country: 'us' });
    expect(firefox).toMatchObject({ totalClicks: 2, uniqueClicks: 1, browsers: { Firefox: 2 }, appEventsFiltered: false });
    expect((await owner.analytics.summary({ ...range, notBrowser: ['Firefox'] })).totalClicks).toBe(3);
    const error = await owner.analytics.link(clicked.id, { browser: 'Other' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect((error as ServiceValidationError).details[0]!.field).toBe('browser');
  });

  it('exports CSV text by default and rows with format json', async () => {
    const range = { startDate: '2025-03-01', endDate: '2025-03-02' };
    const csv = await owner.analytics.export(clicked.id, range);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('bucket,dimension,value,clicks');
    expect(lines).toContain('2025-03-01T00:00:00.000Z,total,all,3');
    expect(lines).toContain('2025-03-02T00:00:00.000Z,browser,Firefox,2');

    const rows = await owner.analytics.export(clicked.id, { ...range, format: 'json' });
    expect(rows).toContainEqual({ bucket: '2025-03-01T00:00:00.000Z', dimension: 'browser', value: 'Chrome', clicks: 3 });
    expect(rows.filter((r) => r.dimension === 'total').map((r) => r.clicks)).toEqual([3, 2]);
    expect(rows).toHaveLength(lines.length - 1);

    // Failures of the export are still the envelope, so still typed errors.
    await expect(owner.analytics.export(quiet.id, { format: 'csv', timeBucket: 'hour', startDate: '1990-01-01' })).rejects.toBeInstanceOf(
      ServiceValidationError,
    );
    const other = createClient({ baseUrl });
    await other.auth.register(newAccount());
    await expect(other.analytics.export(clicked.id)).rejects.toMatchObject({ name: 'ServiceForbiddenError', status: 403 });
  });

  it('summarises one tag, and exports every link wide or long', async () => {
    const [tagged] = await owner.links.createMany([{ title: 'Tagged', defaultUrl: 'https://example.com/t', tags: ['spring'] }]);
    expect(await owner.analytics.summary({ tag: 'spring' })).toEqual({
      totalLinks: 1,
      totalClicks: 0,
      activeLinks: 1,
      topLinks: [],
      appEventsFiltered: true,
    });
    expect((await owner.analytics.summary({ startDate: '2025-03-02', endDate: '2025-03-02' })).totalClicks).toBe(2);

    const range = { startDate: '2025-03-01', endDate: '2025-03-02' };
    const wide = await owner.analytics.export({ ...range, format: 'json', layout: 'wide' });
    const row = wide.find((r) => r.link_id === clicked.id && r.bucket_start === '2025-03-01T00:00:00.000Z')!;
    expect(row).toMatchObject({
      title: 'Clicked',
      clicks: 3,
      unique_clicks: 2,
      desktop: 3,
      desktop_device: 3,
      country_US: 3,
      browser_Chrome: 3,
    });
    expect(wide.filter((r) => r.link_id === tagged!.id)).toHaveLength(2);
    const long = await owner.analytics.export({ ...range, format: 'json', tag: 'spring' });
    expect(long.every((r) => r.link_id === tagged!.id && r.clicks === 0)).toBe(true);
    const csv = await owner.analytics.export({ ...range, layout: 'wide' });
    expect(csv.split('\r\n')[0]).toMatch(/^link_id,title,short_url,bucket_start,clicks,unique_clicks,/);
    const perLink = await owner.analytics.export(clicked.id, { ...range, format: 'json', layout: 'wide' });
    expect(perLink.map((r) => r.clicks)).toEqual([3, 2]);
  });
});
