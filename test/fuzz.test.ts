// Property-based fuzzing of every API route and of the redirector: random and malformed bodies,
// query strings and headers, bounded in count and time. No answer may be a 5xx; every API answer is
// the envelope; nothing may hang.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, WEBHOOK_EVENTS } from '@deeplink/core';
import { createApiHarness, harnessWithLink, type ApiHarness } from '../services/api/test/harness.js';
import { createLink, createUser, startRedirector, type RedirectorProcess } from '../services/redirector/test/support.js';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';

const RUNS = 250;
const ROUTES: [string, string][] = [
  ['POST', '/api/auth/register'],
  ['POST', '/api/auth/login'],
  ['GET', '/api/auth/me'],
  ['POST', '/api/auth/api-keys'],
  ['DELETE', '/api/auth/api-keys/:id'],
  ['POST', '/api/auth/logout-all'],
  ['POST', '/api/auth/password'],
  ['POST', '/api/links'],
  ['GET', '/api/links'],
  ['GET', '/api/links/:id'],
  ['PUT', '/api/links/:id'],
  ['DELETE', '/api/links/:id'],
  ['GET', '/api/links/:id/qr'],
  ['GET', '/api/analytics/links/:id'],
  ['GET', '/api/analytics/links/:id/export'],
  ['GET', '/api/analytics/summary'],
  ['GET', '/api/analytics/export'],
  ['POST', '/api/apps'],
  ['POST', '/api/apps/:id/key'],
  ['POST', '/api/app/open'],
  ['POST', '/api/app/install'],
  ['PATCH', '/api/apps/:id'],
  ['POST', '/api/domains'],
  ['GET', '/api/auth/api-keys'],
  ['POST', '/api/imports'],
  ['GET', '/api/imports/:id'],
  ['GET', '/api/imports/:id/rows'],
  ['PUT', '/api/imports/:id/file'],
  ['POST', '/api/webhooks'],
  ['PATCH', '/api/webhooks/:id'],
  ['POST', '/api/webhooks/:id/rotate-secret'],
  ['GET', '/api/webhooks/:id/deliveries'],
  ['GET', '/api/no-such-route'],
  ['PATCH', '/api/links'],
];
const CODES = new Set<string>(Object.values(ErrorCode));

/**
 * Text with the characters parsers trip on: quotes, brackets, percent signs, control characters,
 * non-ASCII, and halves of a surrogate pair (JSON carries them; UTF-8 and PostgreSQL cannot).
 */
const nasty = fc.string({
  unit: fc.constantFrom(
    'a',
    '0',
    '"',
    "'",
    '{',
    '}',
    '[',
    ']',
    '%',
    '&',
    '=',
    '?',
    '/',
    '\\',
    '\u0000',
    '\n',
    'é',
    '😀',
    '\ud800',
    '\udc00',
    '-',
    '.',
    ':',
    ' ',
  ),
});

/** Percent-encodes `text` for a URL, where a lone surrogate can only travel as U+FFFD (encodeURIComponent throws on it). */
const encodePathSegment = (text: string) => encodeURIComponent(text.replace(/[\uD800-\uDFFF]/gu, '\uFFFD'));

/** Dates at the calendar's edges (years 1, 9999, 10000), bare or with a far offset, and ordinary ones. */
const edgeDate = fc.oneof(
  fc.constantFrom(
    '0001-01-01',
    '0001-01-02',
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:00:00+14:00',
    '9999-12-31',
    '9999-12-31T23:59:59-14:00',
    '10000-01-01',
    '+010000-01-01T00:00:00Z',
    '0000-12-31',
  ),
  fc
    .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc
    .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
);

/** Filters of the analytics routes, repeated, with values valid, near valid (Other, empty) and nasty. */
const filterPairs = fc.array(
  fc.tuple(
    fc.constantFrom('country', 'notCountry', 'platform', 'notPlatform', 'device', 'notDevice', 'browser', 'os', 'referrer', 'notReferrer'),
    fc.oneof(fc.constantFrom('DE', 'us', 'iOS', 'android', 'Mobile', 'Chrome', 'direct', 'Unknown', 'Other', ''), nasty),
  ),
  { maxLength: 24 },
);

/** Query strings of the analytics routes: ranges at the calendar's edges, with or without a start, and filters. */
const rangeQuery = fc
  .tuple(
    fc.record(
      {
        startDate: edgeDate,
        endDate: edgeDate,
        timezone: fc.constantFrom('UTC', 'Etc/GMT-14', 'Etc/GMT+12', 'Europe/Paris'),
        timeBucket: fc.constantFrom('hour', 'day', 'month'),
        layout: fc.constantFrom('long', 'wide'),
      },
      { requiredKeys: [] },
    ),
    filterPairs,
  )
  .map(([range, filters]) => [...Object.entries(range), ...filters]);

describe('API fuzz', () => {
  let api: ApiHarness;
  let token: string;
  let linkId: string;
  let shortUrl: string;
  let appKey: string;
  beforeAll(async () => {
    ({ api, token, linkId } = await harnessWithLink());
    shortUrl = (await api.request({ method: 'GET', url: `/api/links/${linkId}`, token })).json().data.link.url;
    appKey = (
      await api.request({
        method: 'POST',
        url: '/api/apps',
        token,
        payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.fuzz' },
      })
    ).json().data.app.key;
  });
  afterAll(() => api.close());

  it('answers every random request with the envelope and never a 5xx', async () => {
    const body = fc.oneof(
      fc.json(),
      nasty,
      fc.record(
        {
          title: nasty,
          defaultUrl: fc.oneof(nasty, fc.webUrl()),
          customParameters: fc.dictionary(nasty, nasty, { maxKeys: 3 }),
          expirationDate: fc.oneof(
            nasty,
            fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          ),
        },
        { requiredKeys: [] },
      ),
      fc.record({ email: nasty, password: nasty, name: nasty, currentPassword: nasty, newPassword: nasty }, { requiredKeys: [] }),
    );
    // Bodies valid but for their nasty fields, per route: random bodies seldom get past the first
    // check, and text PostgreSQL cannot store only fails once everything else is right.
    const orNasty = (valid: string) => fc.oneof(fc.constant(valid), nasty);
    const linkFields = {
      title: orNasty('Spring'),
      defaultUrl: fc.constant('https://example.com/'),
      customParameters: fc.dictionary(orNasty('utm_source'), orNasty('mail'), { maxKeys: 2 }),
      socialPreview: fc.record({ title: orNasty('Preview'), description: nasty }, { requiredKeys: ['title'] }),
      expirationDate: edgeDate,
    };
    const nearValidBodies: Record<string, fc.Arbitrary<unknown>> = {
      'POST /api/auth/register': fc.record({
        name: orNasty('Ann'),
        email: fc.uuid().map((id) => `${id}@example.com`),
        password: orNasty('correct horse battery'),
      }),
      'POST /api/auth/api-keys': fc.record({ name: nasty }),
      'POST /api/apps': fc.record({
        platform: fc.constant('ios'),
        name: nasty,
        teamId: fc.constant('ABCDE12345'),
        bundleId: fc.uuid().map((id) => `com.example.a${id.slice(0, 8)}`),
      }),
      'POST /api/app/open': fc.record(
        {
          url: fc.oneof(
            fc.constant(shortUrl),
            fc.webUrl({ withQueryParameters: true, withFragments: true }),
            nasty.map((text) => `${shortUrl}${text}`),
            nasty,
          ),
          openId: fc.oneof(fc.uuid(), nasty),
          firstLaunch: fc.oneof(fc.boolean(), nasty),
        },
        { requiredKeys: ['url'] },
      ),
      'POST /api/app/install': fc.record(
        {
          installId: fc.oneof(fc.uuid(), nasty),
          referrer: fc.oneof(
            fc.constant('utm_source=google-play&dl_token=AAAAAAAAAAAAAAAAAAAAAA'),
            nasty.map((text) => `dl_token=${text}`),
            nasty,
          ),
          pasteboard: fc.oneof(
            nasty.map((text) => `${shortUrl}?dl_token=${text}`),
            nasty,
          ),
          device: fc.record(
            {
              osVersion: orNasty('17.4'),
              deviceFamily: fc.oneof(fc.constantFrom('phone', 'tablet'), nasty),
              language: orNasty('fr-FR'),
              timeZone: orNasty('Europe/Paris'),
              screen: fc.record({ width: fc.oneof(fc.integer(), nasty), height: fc.integer() }),
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: ['installId'] },
      ),
      'PATCH /api/apps/:id': fc.record(
        { fingerprintMatching: fc.oneof(fc.boolean(), nasty), fingerprintWindowMinutes: fc.oneof(fc.integer(), nasty) },
        { requiredKeys: [] },
      ),
      'POST /api/imports': fc.record(
        {
          format: fc.oneof(fc.constantFrom('takeout', 'generic', 'bitly', 'shlink', 'kutt', 'yourls'), nasty),
          domain: nasty,
          dryRun: fc.oneof(fc.boolean(), nasty),
          mapping: fc.oneof(fc.dictionary(fc.constantFrom('code', 'defaultUrl', 'tags', 'title', 'unknown'), nasty), nasty),
        },
        { requiredKeys: ['format'] },
      ),
      'POST /api/links': fc.record(linkFields, { requiredKeys: ['title', 'defaultUrl'] }),
      'PUT /api/links/:id': fc.record(linkFields, { requiredKeys: [] }),
      'POST /api/webhooks': fc.record(
        {
          url: fc.oneof(fc.constant('https://hooks.example.com/in'), fc.constant('https://u:p@hooks.example.com/'), nasty),
          events: fc.oneof(fc.array(fc.constantFrom(...WEBHOOK_EVENTS, 'link.exploded'), { maxLength: 10 }), nasty),
          enabled: fc.oneof(fc.boolean(), nasty),
          description: nasty,
        },
        { requiredKeys: ['url', 'events'] },
      ),
    };
    const request = fc
      .constantFrom(...ROUTES)
      .chain(([method, route]) =>
        fc.tuple(
          fc.constant([method, route] as const),
          nearValidBodies[`${method} ${route}`] ? fc.oneof(nearValidBodies[`${method} ${route}`]!, body) : body,
          route.startsWith('/api/analytics')
            ? fc.oneof(rangeQuery, fc.dictionary(nasty, nasty, { maxKeys: 4 }).map(Object.entries))
            : fc.dictionary(nasty, nasty, { maxKeys: 4 }).map(Object.entries),
        ),
      );
    await fc.assert(
      fc.asyncProperty(
        request,
        fc.oneof(fc.constant(linkId), nasty),
        fc.oneof(
          { arbitrary: fc.constant('application/json'), weight: 3 },
          fc.constantFrom('text/plain', 'text/csv', 'application/x-www-form-urlencoded', ''),
        ),
        fc.oneof({ arbitrary: fc.constant('valid'), weight: 3 }, fc.constantFrom('none', 'garbage')),
        async ([[method, route], payload, query], id, contentType, auth) => {
          const path = route.replace(':id', encodePathSegment(id));
          const search = new URLSearchParams(query).toString();
          // The App SDK route takes an app key in X-App-Key; every other route a Bearer credential.
          const credentials =
            route === '/api/app/open' || route === '/api/app/install'
              ? { headers: auth === 'none' ? {} : { 'x-app-key': auth === 'valid' ? appKey : 'dla_garbage' } }
              : { headers: auth === 'garbage' ? { authorization: 'Bearer dlk_garbage' } : {}, ...(auth === 'valid' && { token }) };
          const response = await api.request({
            method: method as 'GET',
            url: search ? `${path}?${search}` : path,
            ...credentials,
            headers: { 'content-type': contentType, ...credentials.headers },
            ...(method !== 'GET' && method !== 'DELETE' && { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
          });
          expect(response.statusCode, `${method} ${path} → ${response.body}`).toBeLessThan(500);
          // A successful export or QR code is a file (CSV, a JSON array, SVG or PNG); every other answer, and every failure, is the envelope.
          if (response.statusCode < 300 && (route.endsWith('/export') || route.endsWith('/qr'))) return;
          const envelope = response.json();
          expect(typeof envelope.success).toBe('boolean');
          if (!envelope.success) {
            expect(CODES.has(envelope.error.code)).toBe(true);
            expect(Array.isArray(envelope.error.details)).toBe(true);
          }
        },
      ),
      { numRuns: RUNS, interruptAfterTimeLimit: 60_000 },
    );
  }, 90_000);
});

describe('import fuzz', () => {
  let api: ApiHarness;
  let token: string;
  beforeAll(async () => {
    api = await createApiHarness({ env: { RATE_LIMIT_MAX: '100000' } });
    token = (await api.registerUser()).token;
  });
  afterAll(() => api?.close());

  it('reads random CSV text in every format without a 5xx, answering the envelope', async () => {
    const cell = fc.oneof(nasty, fc.constantFrom('https://example.com/x', 'abc123', 'com.example.app', 'TRUE', '2020-01-01', ''));
    const row = fc.array(cell, { maxLength: 8 }).map((cells) => cells.join(','));
    const headers = fc.constantFrom(
      'Short link,Deep link,Android package name (apn),Archived?,Link name,Creation timestamp',
      'link,long_url,title,tags,archived',
      'shortCode,longUrl,title,tags',
      'address,target,description,expire_in',
      'keyword,url,title,timestamp',
      'Slug,Destination',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('takeout', 'bitly', 'shlink', 'kutt', 'yourls', 'generic'),
        fc.oneof(headers, nasty),
        fc.array(row, { maxLength: 6 }),
        fc.constantFrom('\n', '\r\n'),
        async (format, header, rows, newline) => {
          const created = await api.request({
            method: 'POST',
            url: '/api/imports',
            token,
            payload: { format, ...(format === 'generic' && { mapping: { code: 'Slug', defaultUrl: 'Destination' } }) },
          });
          expect(created.statusCode).toBe(201);
          const response = await api.request({
            method: 'PUT',
            url: `/api/imports/${created.json().data.import.id}/file`,
            token,
            headers: { 'content-type': 'text/csv' },
            payload: [header, ...rows].join(newline),
          });
          expect(response.statusCode, response.body).toBeLessThan(500);
          expect(typeof response.json().success).toBe('boolean');
        },
      ),
      { numRuns: 150, interruptAfterTimeLimit: 45_000 },
    );
  }, 90_000);
});

describe('redirector fuzz', () => {
  let env: TestEnvironment;
  let redirector: RedirectorProcess;
  let code: string;
  beforeAll(async () => {
    env = await createTestEnvironment({ TRUST_PROXY: '1' });
    redirector = await startRedirector(env.env);
    code = (await createLink(env.sql, await createUser(env.sql), { iosLink: { url: 'app://x', bundleId: 'com.example.app' } })).code;
  });
  afterAll(async () => {
    await redirector?.stop();
    await env?.close();
  });

  it('answers every random visit in time, never with a 5xx', async () => {
    const header = fc.string({ unit: fc.constantFrom('a', '1', ',', ' ', '.', ':', ';', '/', '(', ')', 'é', '%', '"'), maxLength: 300 });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constant(`/${code}`),
          nasty.map((path) => `/${encodePathSegment(path)}`),
          fc.constant('/'),
          fc.constant('/metrics'),
        ),
        fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'OPTIONS'),
        header,
        header,
        header,
        async (path, method, userAgent, referer, forwardedFor) => {
          const response = await fetch(`${redirector.url}${path}`, {
            method,
            redirect: 'manual',
            headers: { 'user-agent': userAgent, referer, 'x-forwarded-for': forwardedFor },
            signal: AbortSignal.timeout(5_000),
          });
          await response.arrayBuffer();
          expect([200, 302, 404, 405, 410], `${method} ${path}`).toContain(response.status);
        },
      ),
      { numRuns: RUNS, interruptAfterTimeLimit: 60_000 },
    );
  }, 90_000);
});
