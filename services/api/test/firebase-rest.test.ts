// Firebase Dynamic Links' REST API (POST /v1/shortLinks, GET /v1/{shortLink}/linkStats) on a real
// API, PostgreSQL and Redis: requests as FDL's reference writes them, each field of dynamicLinkInfo
// into the link it makes, the suffix options, idempotency, the errors in Google's shape, and the
// counts of linkStats from rollups written by the worker's own repository.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollupsRepository } from '@deeplink/core/db';
import { ANDROID_CHROME, DESKTOP_CHROME, IPHONE_SAFARI, recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
let key: string;
let otherKey: string;
let base: string;

const createKey = async (token: string) => {
  const response = await api.request({ method: 'POST', url: '/api/auth/api-keys', token, payload: { name: 'FDL backend' } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.apiKey.key as string;
};

/** POST /v1/shortLinks as FDL's clients send it: the key in the query. */
const shorten = (payload: unknown, apiKey = key, query = '') =>
  api.request({ method: 'POST', url: `/v1/shortLinks?key=${encodeURIComponent(apiKey)}${query}`, payload: payload as object });

/** The link a short link names, as the links API answers it. */
async function linkOf(shortLink: string): Promise<Record<string, unknown>> {
  const code = new URL(shortLink).pathname.slice(1);
  const [row] = await api.env.sql<{ id: string }[]>`SELECT id FROM links WHERE code = ${code}`;
  const response = await api.request({ method: 'GET', url: `/api/links/${row!.id}`, token: owner.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.link;
}

let unique = 0;
/** A deep link no other test uses, so each request makes a link of its own. */
const deepLink = () => `https://shop.example.com/item/${++unique}`;

beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Migrating');
  key = await createKey(owner.token);
  otherKey = await createKey((await api.registerUser('Someone else')).token);
  base = api.env.config.SHORT_URL_BASE.replace(/\/+$/, '');
});
afterAll(() => api?.close());

describe('POST /v1/shortLinks', () => {
  it('answers a short link, its preview link and no warnings for the reference example', async () => {
    const link = deepLink();
    const response = await shorten({
      dynamicLinkInfo: { domainUriPrefix: base, link, androidInfo: { androidPackageName: 'com.example.android' } },
      suffix: { option: 'UNGUESSABLE' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toEqual({ shortLink: expect.any(String), previewLink: `${body.shortLink}?d=1`, warning: [] });
    expect(body.shortLink).toMatch(new RegExp(`^${base}/[0-9A-Za-z]{17}$`));
    expect(await linkOf(body.shortLink)).toMatchObject({
      defaultUrl: link,
      androidLink: { url: link, appPackageName: 'com.example.android' },
    });
  });

  it('makes UNGUESSABLE codes by default: 17 base62 characters', async () => {
    const codes = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const response = await shorten({ dynamicLinkInfo: { link: deepLink() } });
        expect(response.statusCode, response.body).toBe(200);
        return new URL(response.json().shortLink).pathname.slice(1);
      }),
    );
    for (const code of codes) expect(code).toMatch(/^[0-9A-Za-z]{17}$/);
    expect(new Set(codes).size).toBe(5);
  });

  it('makes SHORT codes of 4 characters while those are free', async () => {
    const response = await shorten({ dynamicLinkInfo: { link: deepLink() }, suffix: { option: 'SHORT' } });
    expect(response.statusCode, response.body).toBe(200);
    expect(new URL(response.json().shortLink).pathname.slice(1)).toMatch(/^[0-9A-Za-z]{4}$/);
  });

  it('answers the same short link for the same information, whatever its order, and another for another suffix option', async () => {
    const link = deepLink();
    const info = {
      link,
      iosInfo: { iosBundleId: 'com.example.ios', iosAppStoreId: '123456789' },
      socialMetaTagInfo: { socialTitle: 'Hi' },
    };
    const reordered = {
      socialMetaTagInfo: { socialTitle: 'Hi' },
      iosInfo: { iosAppStoreId: '123456789', iosBundleId: 'com.example.ios' },
      link,
    };
    const first = (await shorten({ dynamicLinkInfo: info })).json().shortLink;
    expect((await shorten({ dynamicLinkInfo: reordered, suffix: { option: 'UNGUESSABLE' } })).json().shortLink).toBe(first);
    expect((await shorten({ dynamicLinkInfo: info, suffix: { option: 'OPTION_UNSPECIFIED' } })).json().shortLink).toBe(first);
    // The same link as a long dynamic link is the same parameters.
    const long = `${base}/?link=${encodeURIComponent(link)}&ibi=com.example.ios&isi=123456789&st=Hi`;
    expect((await shorten({ longDynamicLink: long })).json().shortLink).toBe(first);
    const short = (await shorten({ dynamicLinkInfo: info, suffix: { option: 'SHORT' } })).json().shortLink;
    expect(short).not.toBe(first);
    expect((await shorten({ dynamicLinkInfo: info, suffix: { option: 'SHORT' } })).json().shortLink).toBe(short);
    const [count] = await api.env.sql`SELECT count(*)::int AS n FROM links WHERE default_url = ${link}`;
    expect(count!.n).toBe(2);
  });

  it('gives each account its own link for the same information on the default domain', async () => {
    const info = { dynamicLinkInfo: { link: deepLink() } };
    const mine = (await shorten(info)).json().shortLink;
    const theirs = (await shorten(info, otherKey)).json().shortLink;
    expect(theirs).not.toBe(mine);
  });

  it('shortens a long dynamic link on the default domain', async () => {
    const link = deepLink();
    const long = `${base}/?link=${encodeURIComponent(link)}&apn=com.example.android&afl=${encodeURIComponent('https://example.com/android')}&utm_source=mail`;
    const response = await shorten({ longDynamicLink: long, suffix: { option: 'SHORT' } });
    expect(response.statusCode, response.body).toBe(200);
    expect(await linkOf(response.json().shortLink)).toMatchObject({
      defaultUrl: link,
      androidLink: { appPackageName: 'com.example.android', fallbackUrl: 'https://example.com/android' },
      customParameters: { utm_source: 'mail' },
    });
  });

  it('reads the Authorization header before the query: a bad header is refused whatever the key', async () => {
    const response = await api.request({
      method: 'POST',
      url: `/v1/shortLinks?key=${key}`,
      headers: { authorization: 'Basic abc' },
      payload: { dynamicLinkInfo: { link: deepLink() } },
    });
    expect(response.statusCode, response.body).toBe(401);
    expect(response.json().error.message).toMatch(/Authorization header/);
  });

  it('takes the key as Authorization: Bearer too, and ignores query parameters Google clients add', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/v1/shortLinks?alt=json&prettyPrint=false',
      headers: { authorization: `Bearer ${key}` },
      payload: { dynamicLinkInfo: { link: deepLink() } },
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe('each field of dynamicLinkInfo ends up in the link', () => {
  const ios = { iosBundleId: 'com.example.ios' };
  const android = { androidPackageName: 'com.example.android' };
  const cases: { field: string; info: (link: string) => object; expected: (link: string) => object }[] = [
    { field: 'link', info: (link) => ({ link }), expected: (link) => ({ defaultUrl: link, title: link }) },
    {
      field: 'androidInfo.androidPackageName',
      info: (link) => ({ link, androidInfo: android }),
      expected: (link) => ({ androidLink: { url: link, appPackageName: 'com.example.android' } }),
    },
    {
      field: 'androidInfo.androidFallbackLink',
      info: (link) => ({ link, androidInfo: { ...android, androidFallbackLink: 'https://example.com/get-android' } }),
      expected: () => ({ androidLink: expect.objectContaining({ fallbackUrl: 'https://example.com/get-android' }) }),
    },
    {
      field: 'androidInfo.androidMinPackageVersionCode',
      info: (link) => ({ link, androidInfo: { ...android, androidMinPackageVersionCode: '42' } }),
      expected: () => ({ androidLink: expect.objectContaining({ minimumVersion: '42' }) }),
    },
    {
      field: 'iosInfo.iosBundleId',
      info: (link) => ({ link, iosInfo: ios }),
      expected: (link) => ({
        iosLink: { url: `com.example.ios://google/link/?deep_link_id=${encodeURIComponent(link)}`, bundleId: 'com.example.ios' },
      }),
    },
    {
      field: 'iosInfo.iosFallbackLink',
      info: (link) => ({ link, iosInfo: { ...ios, iosFallbackLink: 'https://example.com/get-ios' } }),
      expected: () => ({ iosLink: expect.objectContaining({ fallbackUrl: 'https://example.com/get-ios' }) }),
    },
    {
      field: 'iosInfo.iosCustomScheme',
      info: (link) => ({ link, iosInfo: { ...ios, iosCustomScheme: 'exampleapp' } }),
      expected: (link) => ({
        iosLink: expect.objectContaining({ url: `exampleapp://google/link/?deep_link_id=${encodeURIComponent(link)}` }),
      }),
    },
    {
      field: 'iosInfo.iosAppStoreId',
      info: (link) => ({ link, iosInfo: { ...ios, iosAppStoreId: '123456789' } }),
      expected: () => ({ iosLink: expect.objectContaining({ fallbackUrl: 'https://apps.apple.com/app/id123456789' }) }),
    },
    {
      field: 'iosInfo.iosMinimumVersion',
      info: (link) => ({ link, iosInfo: { ...ios, iosMinimumVersion: '2.1' } }),
      expected: () => ({ iosLink: expect.objectContaining({ minimumVersion: '2.1' }) }),
    },
    {
      field: 'iosInfo.iosIpadFallbackLink',
      info: (link) => ({ link, iosInfo: { ...ios, iosIpadFallbackLink: 'https://example.com/get-ipad' } }),
      expected: () => ({ iosLink: expect.objectContaining({ ipadFallbackUrl: 'https://example.com/get-ipad' }) }),
    },
    {
      field: 'iosInfo.iosIpadBundleId',
      info: (link) => ({ link, iosInfo: { ...ios, iosIpadBundleId: 'com.example.ipad' } }),
      expected: (link) => ({
        iosLink: expect.objectContaining({
          ipadBundleId: 'com.example.ipad',
          ipadUrl: `com.example.ipad://google/link/?deep_link_id=${encodeURIComponent(link)}`,
        }),
      }),
    },
    {
      field: 'navigationInfo.enableForcedRedirect',
      info: (link) => ({ link, iosInfo: ios, navigationInfo: { enableForcedRedirect: true } }),
      expected: () => ({ iosLink: expect.objectContaining({ skipAppPage: true }) }),
    },
    {
      field: 'desktopInfo.desktopFallbackLink',
      info: (link) => ({ link, desktopInfo: { desktopFallbackLink: 'https://example.com/desktop' } }),
      expected: () => ({ desktopUrl: 'https://example.com/desktop' }),
    },
    {
      field: 'socialMetaTagInfo.socialTitle',
      info: (link) => ({ link, socialMetaTagInfo: { socialTitle: 'Spring sale' } }),
      expected: () => ({ title: 'Spring sale', socialPreview: { title: 'Spring sale' } }),
    },
    {
      field: 'socialMetaTagInfo.socialDescription',
      info: (link) => ({ link, socialMetaTagInfo: { socialTitle: 'T', socialDescription: 'Everything half price' } }),
      expected: () => ({ socialPreview: { title: 'T', description: 'Everything half price' } }),
    },
    {
      field: 'socialMetaTagInfo.socialImageLink',
      info: (link) => ({ link, socialMetaTagInfo: { socialTitle: 'T', socialImageLink: 'https://example.com/card.png' } }),
      expected: () => ({ socialPreview: { title: 'T', imageUrl: 'https://example.com/card.png' } }),
    },
    {
      field: 'analyticsInfo.googlePlayAnalytics',
      info: (link) => ({
        link,
        analyticsInfo: {
          googlePlayAnalytics: { utmSource: 'mail', utmMedium: 'email', utmCampaign: 'spring', utmTerm: 'shoes', utmContent: 'top' },
        },
      }),
      expected: () => ({
        customParameters: { utm_source: 'mail', utm_medium: 'email', utm_campaign: 'spring', utm_term: 'shoes', utm_content: 'top' },
      }),
    },
    {
      field: 'analyticsInfo.itunesConnectAnalytics',
      info: (link) => ({
        link,
        iosInfo: { ...ios, iosAppStoreId: '123456789' },
        analyticsInfo: { itunesConnectAnalytics: { at: 'aff', ct: 'camp', mt: '8', pt: 'prov' } },
      }),
      expected: () => ({
        iosLink: expect.objectContaining({ fallbackUrl: 'https://apps.apple.com/app/id123456789?at=aff&ct=camp&mt=8&pt=prov' }),
      }),
    },
  ];

  it.each(cases)('$field', async ({ info, expected }) => {
    const link = deepLink();
    const response = await shorten({ dynamicLinkInfo: info(link) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().warning).toEqual([]);
    expect(await linkOf(response.json().shortLink)).toMatchObject(expected(link));
  });

  it('domainUriPrefix: an active custom domain of the caller, with or without its scheme (dynamicLinkDomain)', async () => {
    const [domain] = await api.env.sql<{ id: string }[]>`
      INSERT INTO domains (user_id, hostname, verification_token, verified_at)
      VALUES (${owner.id}, 'go.migrating.test', 'token', now()) RETURNING id`;
    const link = deepLink();
    const viaPrefix = await shorten({ dynamicLinkInfo: { domainUriPrefix: 'https://go.migrating.test', link } });
    expect(viaPrefix.statusCode, viaPrefix.body).toBe(200);
    expect(viaPrefix.json().shortLink).toMatch(/^https?:\/\/go\.migrating\.test\/[0-9A-Za-z]{17}$/);
    expect(await linkOf(viaPrefix.json().shortLink)).toMatchObject({ domain: 'go.migrating.test', defaultUrl: link });
    const viaDomain = await shorten({ dynamicLinkInfo: { dynamicLinkDomain: 'go.migrating.test', link } });
    expect(viaDomain.json().shortLink).toBe(viaPrefix.json().shortLink);
    const long = await shorten({ longDynamicLink: `https://go.migrating.test/?link=${encodeURIComponent(link)}` });
    expect(long.json().shortLink).toBe(viaPrefix.json().shortLink);
    expect(domain).toBeDefined();
  });

  it.each([
    ['navigationInfo.enableForcedRedirect', { navigationInfo: { enableForcedRedirect: true } }],
    ['iosInfo.iosIpadFallbackLink', { iosInfo: { iosIpadFallbackLink: 'https://example.com/ipad' } }],
    ['iosInfo.iosIpadBundleId', { iosInfo: { iosIpadBundleId: 'com.example.ipad' } }],
  ])('%s without an iOS app: not applied, so a warning names the field', async (field, extra) => {
    const response = await shorten({ dynamicLinkInfo: { link: deepLink(), ...extra } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().warning).toEqual([
      {
        warningCode: 'UNRECOGNIZED_PARAM',
        warningMessage: expect.stringMatching(new RegExp(`^dynamicLinkInfo\\.${field.replace('.', '\\.')}: `)),
      },
    ]);
  });

  it.each([
    ['androidInfo.androidLink', { androidInfo: { androidPackageName: 'com.example.android', androidLink: 'https://example.com/a' } }],
    ['analyticsInfo.googlePlayAnalytics.gclid', { analyticsInfo: { googlePlayAnalytics: { gclid: 'abc' } } }],
  ])('%s: a field FDL had that no link here holds is a warning, never silent', async (field, extra) => {
    const response = await shorten({ dynamicLinkInfo: { link: deepLink(), ...extra } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().warning).toEqual([
      {
        warningCode: 'UNRECOGNIZED_PARAM',
        warningMessage: expect.stringMatching(new RegExp(`^dynamicLinkInfo\\.${field.replaceAll('.', '\\.')}: `)),
      },
    ]);
  });

  it('warns with FDL codes about app fields that need the app they belong to', async () => {
    const response = await shorten({
      dynamicLinkInfo: {
        link: deepLink(),
        androidInfo: { androidMinPackageVersionCode: '3' },
        iosInfo: { iosCustomScheme: 'scheme', iosAppStoreId: '1' },
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(
      response
        .json()
        .warning.map((w: { warningCode: string }) => w.warningCode)
        .sort(),
    ).toEqual(['UNNECESSARY_ANDROID_PACKAGE_MIN_VERSION', 'UNNECESSARY_IOS_APP_STORE_ID', 'UNNECESSARY_IOS_URL_SCHEME']);
  });
});

describe('errors in Google’s shape', () => {
  const expectGoogleError = (response: Awaited<ReturnType<ApiHarness['request']>>, code: number, status: string) => {
    expect(response.statusCode, response.body).toBe(code);
    expect(response.json()).toEqual({ error: expect.objectContaining({ code, status, message: expect.any(String) }) });
  };

  it('401 UNAUTHENTICATED without a key, with an unknown one, or with a login token in the query', async () => {
    const payload = { dynamicLinkInfo: { link: deepLink() } };
    expectGoogleError(await api.request({ method: 'POST', url: '/v1/shortLinks', payload }), 401, 'UNAUTHENTICATED');
    expectGoogleError(await shorten(payload, 'dlk_unknownunknownunknownunknownunknownunknown1'), 401, 'UNAUTHENTICATED');
    const withToken = await shorten(payload, owner.token);
    expectGoogleError(withToken, 401, 'UNAUTHENTICATED');
    expect(withToken.json().error.message).toMatch(/API key/);
  });

  it('400 INVALID_ARGUMENT naming the field: a bad value, a missing link, an unknown field, both or neither of the link forms', async () => {
    const badFallback = await shorten({
      dynamicLinkInfo: { link: deepLink(), desktopInfo: { desktopFallbackLink: 'javascript:alert(1)' } },
    });
    expectGoogleError(badFallback, 400, 'INVALID_ARGUMENT');
    expect(badFallback.json().error.details[0]).toEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'dynamicLinkInfo.desktopInfo.desktopFallbackLink', description: expect.any(String) }],
    });
    expect(badFallback.json().error.message).toContain('dynamicLinkInfo.desktopInfo.desktopFallbackLink');

    const noLink = await shorten({ dynamicLinkInfo: { androidInfo: { androidPackageName: 'com.example.android' } } });
    expectGoogleError(noLink, 400, 'INVALID_ARGUMENT');
    expect(noLink.json().error.message).toContain('dynamicLinkInfo.link');

    const unknownField = await shorten({ dynamicLinkInfo: { link: deepLink(), iosInfo: { iosBundleID: 'x' } } });
    expectGoogleError(unknownField, 400, 'INVALID_ARGUMENT');
    expect(unknownField.json().error.details[0].fieldViolations[0].field).toBe('dynamicLinkInfo.iosInfo.iosBundleID');

    expectGoogleError(await shorten({}), 400, 'INVALID_ARGUMENT');
    expectGoogleError(
      await shorten({ dynamicLinkInfo: { link: deepLink() }, longDynamicLink: `${base}/?link=x` }),
      400,
      'INVALID_ARGUMENT',
    );
    expectGoogleError(await shorten({ dynamicLinkInfo: { link: deepLink() }, suffix: { option: 'CUSTOM' } }), 400, 'INVALID_ARGUMENT');
  });

  it('400 INVALID_ARGUMENT for a long link without link, not a URL, or on a domain that is not the caller’s', async () => {
    const noLink = await shorten({ longDynamicLink: `${base}/?apn=com.example.android` });
    expectGoogleError(noLink, 400, 'INVALID_ARGUMENT');
    expect(noLink.json().error.message).toContain('longDynamicLink');
    expectGoogleError(await shorten({ longDynamicLink: 'not a url' }), 400, 'INVALID_ARGUMENT');
    const badParam = await shorten({ longDynamicLink: `${base}/?link=${encodeURIComponent(deepLink())}&ofl=ftp%3A%2F%2Fx` });
    expectGoogleError(badParam, 400, 'INVALID_ARGUMENT');
    expect(badParam.json().error.details[0].fieldViolations[0].field).toBe('longDynamicLink.ofl');

    for (const domainUriPrefix of [
      'https://example.page.link',
      'https://go.unverified.test',
      `${base}/extra`,
      'javascript:alert(1)',
      'https://user@go.migrating.test',
      'https://go.migrating.test:8443',
    ]) {
      const response = await shorten({ dynamicLinkInfo: { domainUriPrefix, link: deepLink() } });
      expectGoogleError(response, 400, 'INVALID_ARGUMENT');
      expect(response.json().error.details[0].fieldViolations[0].field).toBe('dynamicLinkInfo.domainUriPrefix');
    }
    const foreign = await shorten({ longDynamicLink: `https://example.page.link/?link=${encodeURIComponent(deepLink())}` });
    expect(foreign.json().error.details[0].fieldViolations[0].field).toBe('longDynamicLink');
  });

  it('400, never a 500, for text no link can hold in a long link or in dynamicLinkInfo', async () => {
    for (const longDynamicLink of [
      `${base}/?link=${encodeURIComponent(deepLink())}&st=a%00b`,
      `${base}/?link=https%3A%2F%2Fexample.com%2F%00`,
      `${base}/?link=${encodeURIComponent(deepLink())}&apn=%ED%A0%80`,
      `${base}/?link=${encodeURIComponent(deepLink())}&utm_source=${'x'.repeat(5000)}`,
    ]) {
      const response = await shorten({ longDynamicLink });
      expect(response.statusCode, `${longDynamicLink.slice(0, 80)}: ${response.body}`).toBe(400);
    }
    expectGoogleError(await shorten({ dynamicLinkInfo: { link: 'https://example.com/\u0000' } }), 400, 'INVALID_ARGUMENT');
    expectGoogleError(
      await shorten({ dynamicLinkInfo: { link: 'https://example.com/', socialMetaTagInfo: { socialTitle: '\ud800' } } }),
      400,
      'INVALID_ARGUMENT',
    );
    expectGoogleError(await shorten({ dynamicLinkInfo: { link: 'x'.repeat(5000) } }), 400, 'INVALID_ARGUMENT');
  });

  it('400 for malformed JSON, 413 for a body over the limit, 415 for one that is not JSON, 404 NOT_FOUND for an unknown /v1 path', async () => {
    const notJson = await api.request({
      method: 'POST',
      url: `/v1/shortLinks?key=${key}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"dynamicLinkInfo":',
    });
    expectGoogleError(notJson, 400, 'INVALID_ARGUMENT');
    const large = await api.request({
      method: 'POST',
      url: `/v1/shortLinks?key=${key}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ longDynamicLink: 'x'.repeat(1024 * 1024) }),
    });
    expectGoogleError(large, 413, 'INVALID_ARGUMENT');
    const form = await api.request({
      method: 'POST',
      url: `/v1/shortLinks?key=${key}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'longDynamicLink=x',
    });
    expectGoogleError(form, 415, 'INVALID_ARGUMENT');
    expectGoogleError(await api.request({ method: 'GET', url: `/v1/nothing?key=${key}` }), 404, 'NOT_FOUND');
    expectGoogleError(await api.request({ method: 'GET', url: `/v1/shortLinks?key=${key}` }), 404, 'NOT_FOUND');
    expectGoogleError(await api.request({ method: 'GET', url: '/v1' }), 404, 'NOT_FOUND');
  });

  it('429 RESOURCE_EXHAUSTED with Retry-After once the key is over the rate limit', async () => {
    const limited = await createApiHarness({ env: { RATE_LIMIT_MAX: '1' } });
    try {
      const { token } = await limited.registerUser('Busy');
      const created = await limited.request({ method: 'POST', url: '/api/auth/api-keys', token, payload: { name: 'k' } });
      const busyKey = created.json().data.apiKey.key;
      const send = () =>
        limited.request({
          method: 'POST',
          url: `/v1/shortLinks?key=${busyKey}`,
          payload: { dynamicLinkInfo: { link: 'https://example.com/' } },
        });
      await send();
      const response = await send();
      expectGoogleError(response, 429, 'RESOURCE_EXHAUSTED');
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });

  it('never logs the key of the query', async () => {
    const logged = await createApiHarness({ captureLogs: true });
    try {
      const { token } = await logged.registerUser('Logged');
      const created = await logged.request({ method: 'POST', url: '/api/auth/api-keys', token, payload: { name: 'k' } });
      const loggedKey: string = created.json().data.apiKey.key;
      await logged.request({
        method: 'POST',
        url: `/v1/shortLinks?key=${loggedKey}`,
        payload: { dynamicLinkInfo: { link: 'https://example.com/' } },
      });
      expect(logged.logs.join('\n')).toContain('/v1/shortLinks?key=[redacted]');
      expect(logged.logs.join('\n')).not.toContain(loggedKey);
    } finally {
      await logged.close();
    }
  });
});

describe('GET /v1/{shortLink}/linkStats', () => {
  const HOUR = 3_600_000;
  let shortLink: string;
  let linkId: string;

  const stats = (link: string, query: string, apiKey = key) =>
    api.request({ method: 'GET', url: `/v1/${encodeURIComponent(link)}/linkStats?key=${encodeURIComponent(apiKey)}&${query}` });

  beforeAll(async () => {
    shortLink = (
      await shorten({ dynamicLinkInfo: { link: deepLink(), androidInfo: { androidPackageName: 'com.example.android' } } })
    ).json().shortLink;
    const [row] = await api.env.sql<{ id: string }[]>`SELECT id FROM links WHERE code = ${new URL(shortLink).pathname.slice(1)}`;
    linkId = row!.id;
    const now = Date.now();
    const recent = now - 2 * HOUR;
    const old = now - 10 * 24 * HOUR;
    await recordClicks(api.env.sql, [
      rollupClick(linkId, recent, { ...ANDROID_CHROME, visitor: 'a1' }),
      rollupClick(linkId, recent, { ...ANDROID_CHROME, visitor: 'a2' }),
      rollupClick(linkId, recent, { ...IPHONE_SAFARI, visitor: 'i1' }),
      rollupClick(linkId, recent, { ...DESKTOP_CHROME, visitor: 'd1' }),
      rollupClick(linkId, old, { ...ANDROID_CHROME, visitor: 'a3' }),
    ]);
    // App events as the worker commits them: through its rollup repository.
    const event = (
      name: 'REDIRECT' | 'APP_INSTALL' | 'APP_FIRST_OPEN' | 'APP_RE_OPEN',
      platform: 'ANDROID' | 'IOS',
      at: number,
      visitor: string,
    ) => ({
      linkId,
      bucket: Math.floor(at / HOUR) * HOUR,
      name,
      platform,
      visitor,
    });
    await rollupsRepository(api.env.sql).recordBatch({
      batchId: 'fdl-stats',
      receivedClicks: 0,
      clicks: [],
      events: [
        event('REDIRECT', 'ANDROID', recent, 'a1'),
        event('REDIRECT', 'ANDROID', recent, 'a2'),
        event('APP_INSTALL', 'ANDROID', recent, 'a1'),
        event('APP_FIRST_OPEN', 'ANDROID', recent, 'a1'),
        event('APP_RE_OPEN', 'IOS', recent, 'i1'),
        event('REDIRECT', 'ANDROID', old, 'a3'),
      ],
    });
  });

  it('counts clicks and app events per platform within durationDays, leaving out what did not happen', async () => {
    const response = await stats(shortLink, 'durationDays=7');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      linkEventStats: [
        { platform: 'ANDROID', count: '2', event: 'CLICK' },
        { platform: 'IOS', count: '1', event: 'CLICK' },
        { platform: 'DESKTOP', count: '1', event: 'CLICK' },
        { platform: 'ANDROID', count: '2', event: 'REDIRECT' },
        { platform: 'ANDROID', count: '1', event: 'APP_INSTALL' },
        { platform: 'ANDROID', count: '1', event: 'APP_FIRST_OPEN' },
        { platform: 'IOS', count: '1', event: 'APP_RE_OPEN' },
      ],
    });
    const longer = (await stats(shortLink, 'durationDays=30')).json().linkEventStats;
    expect(longer).toContainEqual({ platform: 'ANDROID', count: '3', event: 'CLICK' });
    expect(longer).toContainEqual({ platform: 'ANDROID', count: '3', event: 'REDIRECT' });
  });

  it('answers an empty list for a link nobody visited', async () => {
    const quiet = (await shorten({ dynamicLinkInfo: { link: deepLink() } })).json().shortLink;
    expect((await stats(quiet, 'durationDays=1')).json()).toEqual({ linkEventStats: [] });
  });

  it('answers another account’s link, an unknown one and a non-URL as NOT_FOUND alike', async () => {
    const theirs = (await shorten({ dynamicLinkInfo: { link: deepLink() } }, otherKey)).json().shortLink;
    for (const link of [theirs, `${base}/nope`, 'not-a-url', 'https://go.unknown.test/abc']) {
      const response = await stats(link, 'durationDays=7');
      expect(response.statusCode, `${link}: ${response.body}`).toBe(404);
      expect(response.json().error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    }
    // The other account sees its own.
    expect((await stats(theirs, 'durationDays=7', otherKey)).statusCode).toBe(200);
  });

  it('400 INVALID_ARGUMENT for a missing or out-of-range durationDays, 401 without a key', async () => {
    for (const query of ['', 'durationDays=0', 'durationDays=3651', 'durationDays=1.5', 'durationDays=seven']) {
      const response = await stats(shortLink, query);
      expect(response.statusCode, `${query}: ${response.body}`).toBe(400);
      expect(response.json().error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(response.json().error.details[0].fieldViolations[0].field).toBe('durationDays');
    }
    const anonymous = await api.request({ method: 'GET', url: `/v1/${encodeURIComponent(shortLink)}/linkStats?durationDays=7` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().error.status).toBe('UNAUTHENTICATED');
  });
});
