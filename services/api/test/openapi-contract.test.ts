// The served OpenAPI document against real answers: every operation is called (successes and its
// main errors) on a real API, and each answer's status, body and documented headers are validated
// with ajv against what the document says for that operation and status. An operation the
// document lists but no call exercised fails the last test, so the document cannot drift.
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { UA } from '@deeplink/test-kit/user-agents';
import { ANDROID_CHROME, IPHONE_SAFARI, recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { redisKeys, WEBHOOK_EVENTS } from '@deeplink/core';
import { webhooksRepository } from '@deeplink/core/db';
import { appendLiveEntry } from '@deeplink/core/redis';
import { WEBHOOK_EVENTS_JOB, type WebhookEventsJobData, webhookEventQueue } from '@deeplink/core/webhooks';
import { createApiHarness, type ApiHarness } from './harness.js';
import { storeVisit } from './install-clicks.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface Header {
  $ref?: string;
  required?: boolean;
  schema: object;
}
interface DocResponse {
  description?: string;
  headers?: Record<string, Header>;
  content?: Record<string, { schema: object }>;
}
interface Operation {
  operationId?: string;
  security?: unknown[];
  requestBody?: unknown;
  responses: Record<string, DocResponse>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, Header>; schemas: Record<string, object> };
  webhooks: Record<string, unknown>;
}

type Answer = Awaited<ReturnType<ApiHarness['request']>>;
interface Call {
  method: string;
  url: string;
  token?: string;
  payload?: unknown;
  headers?: Record<string, string>;
  status: number;
}

let api: ApiHarness;
let dns: DnsServer;
let doc: Document;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('binary', true);

/** Every operation of the document, as `METHOD /path/{param}`, with a matcher for real URLs. */
let operations: { key: string; method: string; path: string; operation: Operation; pattern: RegExp }[];
/** Statuses each operation was seen to answer, validated. */
const exercised = new Map<string, Set<number>>();

const operationKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const pointer = (...segments: string[]) => `openapi#/${segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

function operationOf(method: string, url: string) {
  const path = url.split('?')[0]!;
  // Literal segments win over parameters (/links/bulk before /links/{id}).
  const found = operations
    .filter((o) => o.method === method.toLowerCase() && o.pattern.test(path))
    .sort((a, b) => a.path.split('{').length - b.path.split('{').length)[0];
  if (!found) throw new Error(`${method} ${path} is not in the OpenAPI document`);
  return found;
}

/** Headers clients act on: an answer that carries one must have it documented. */
const CONTRACT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'content-disposition',
  'cache-control',
];

/** Validates one answer against the document: its status is documented, its media type, body and headers match. */
function validateAnswer(method: string, url: string, response: Answer): void {
  const { key, path, operation } = operationOf(method, url);
  const status = String(response.statusCode);
  const documented = operation.responses[status];
  expect(documented, `${key} answered ${status}, which the document does not list: ${response.body.slice(0, 300)}`).toBeDefined();

  if (documented!.content) {
    const mediaType = String(response.headers['content-type']).split(';')[0]!;
    expect(Object.keys(documented!.content), `${key} ${status} media type`).toContain(mediaType);
    if (mediaType !== 'image/png') {
      const body = mediaType === 'application/json' ? response.json() : response.body;
      const validate = ajv.getSchema(pointer('paths', path, method.toLowerCase(), 'responses', status, 'content', mediaType, 'schema'))!;
      expect(validate(body) ? [] : validate.errors, `${key} ${status} body: ${response.body.slice(0, 300)}`).toEqual([]);
    }
  }
  for (const [name, declared] of Object.entries(documented!.headers ?? {})) {
    const header = declared.$ref ? doc.components.headers[declared.$ref.split('/').pop()!]! : declared;
    const value = response.headers[name.toLowerCase()];
    if (header.required) expect(value, `${key} ${status} header ${name}`).toBeDefined();
    if (value === undefined) continue;
    const typed = (header.schema as { type?: string }).type === 'integer' && /^-?\d+$/.test(String(value)) ? Number(value) : String(value);
    expect(ajv.validate(header.schema, typed) ? [] : ajv.errors, `${key} ${status} header ${name}: ${value}`).toEqual([]);
  }
  const declared = Object.keys(documented!.headers ?? {}).map((name) => name.toLowerCase());
  const undocumented = CONTRACT_HEADERS.filter((name) => response.headers[name] !== undefined && !declared.includes(name));
  expect(undocumented, `${key} ${status} sends headers the document does not list`).toEqual([]);
  (exercised.get(key) ?? exercised.set(key, new Set()).get(key)!).add(response.statusCode);
}

/** Makes a real request, checks its status, validates the answer against the document. */
async function call({ method, url, token, payload, headers, status }: Call): Promise<Answer> {
  const response = await api.request({ method: method as 'GET', url, token, payload: payload as object, headers });
  expect(response.statusCode, `${method} ${url}: ${response.body.slice(0, 500)}`).toBe(status);
  validateAnswer(method, url, response);
  return response;
}

let owner: { token: string; email: string; password: string };
let other: { token: string };
let apiKey: { id: string; key: string };
let link: { id: string };
let othersLink: { id: string };
let app: { id: string };
/** The key of an app of the owner's that stays, for the App SDK operations. */
let appKey: string;
let domain: { id: string; verification: { name: string; value: string } };
let othersDomain: { id: string };
/** A finished import of the owner's, for the operations on an import. */
let anImport: { id: string };
/** A webhook endpoint of the owner's and one delivery of it, for the operations on them. */
let aWebhook: { id: string };
let aDelivery: { id: string };

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address } });
  doc = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
  ajv.addSchema(doc, 'openapi');
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      key: operationKey(method, path),
      method,
      path,
      operation,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    })),
  );
  const registered = await api.registerUser('Owner');
  owner = registered;
  other = await api.registerUser('Other');
  othersLink = (
    await api.request({
      method: 'POST',
      url: '/api/links',
      token: other.token,
      payload: { title: 'Theirs', defaultUrl: 'https://example.com/' },
    })
  ).json().data.link;
  othersDomain = (
    await api.request({ method: 'POST', url: '/api/domains', token: other.token, payload: { hostname: 'go.other.test' } })
  ).json().data.domain;
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

// Each test makes dozens of real calls (argon2 included): bounds for a loaded two-core machine.
const SWEEP = { timeout: 120_000 };

describe('every operation against the served OpenAPI document', SWEEP, () => {
  it('gives every operation a unique operationId and keeps only the component schemas it uses', () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    const text = JSON.stringify({ paths: doc.paths, components: doc.components, webhooks: doc.webhooks });
    const unused = Object.keys(doc.components.schemas).filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    expect(unused).toEqual([]);
  });

  it('account: register, login, me, password, logout-all and API keys', async () => {
    await call({
      method: 'POST',
      url: '/api/auth/register',
      payload: { name: 'New', email: `new-${randomUUID()}@example.com`, password: 'long enough pw' },
      status: 201,
    });
    await call({
      method: 'POST',
      url: '/api/auth/register',
      payload: { name: 'Again', email: owner.email, password: 'long enough pw' },
      status: 409,
    });
    await call({ method: 'POST', url: '/api/auth/register', payload: { name: '', email: 'not an email', password: 'x' }, status: 400 });
    await call({ method: 'POST', url: '/api/auth/login', payload: { email: owner.email, password: owner.password }, status: 200 });
    await call({ method: 'POST', url: '/api/auth/login', payload: { email: owner.email, password: 'wrong password' }, status: 401 });
    await call({ method: 'GET', url: '/api/auth/me', token: owner.token, status: 200 });

    apiKey = (await call({ method: 'POST', url: '/api/auth/api-keys', token: owner.token, payload: { name: 'ci' }, status: 201 })).json()
      .data.apiKey;
    await call({ method: 'POST', url: '/api/auth/api-keys', token: apiKey.key, payload: { name: 'minted by a key' }, status: 403 });
    await call({ method: 'POST', url: '/api/auth/api-keys', token: owner.token, payload: {}, status: 400 });
    await call({ method: 'GET', url: '/api/auth/api-keys', token: owner.token, status: 200 });
    const spare = (await api.request({ method: 'POST', url: '/api/auth/api-keys', token: owner.token, payload: { name: 'spare' } })).json()
      .data.apiKey;
    await call({ method: 'DELETE', url: `/api/auth/api-keys/${spare.id}`, token: other.token, status: 403 });
    await call({ method: 'DELETE', url: `/api/auth/api-keys/${spare.id}`, token: owner.token, status: 200 });

    const login = await api.registerUser('Password changer');
    const changed = await call({
      method: 'POST',
      url: '/api/auth/password',
      token: login.token,
      payload: { currentPassword: login.password, newPassword: 'another long one' },
      status: 200,
    });
    await call({
      method: 'POST',
      url: '/api/auth/password',
      token: changed.json().data.token,
      payload: { currentPassword: 'not it at all', newPassword: 'another long one' },
      status: 400,
    });
    await call({ method: 'POST', url: '/api/auth/logout-all', token: apiKey.key, status: 403 });
    await call({ method: 'POST', url: '/api/auth/logout-all', token: changed.json().data.token, status: 200 });
  });

  it('links: create, bulk, list, tags, get, update, QR, delete', async () => {
    link = (
      await call({
        method: 'POST',
        url: '/api/links',
        token: owner.token,
        payload: {
          title: 'Spring',
          defaultUrl: 'https://example.com/spring',
          slug: 'spring-sale',
          tags: ['spring'],
          androidLink: { url: 'myapp://spring', appPackageName: 'com.example.app' },
          customParameters: { utm_medium: 'email' },
        },
        status: 201,
      })
    ).json().data.link;
    await call({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { title: 'Taken', defaultUrl: 'https://example.com/', slug: 'spring-sale' },
      status: 409,
    });
    await call({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { title: 'Bad', defaultUrl: 'javascript:alert(1)' },
      status: 400,
    });
    const bulk = (
      await call({
        method: 'POST',
        url: '/api/links/bulk',
        token: owner.token,
        payload: {
          links: [
            { title: 'A', defaultUrl: 'https://example.com/a' },
            { title: 'B', defaultUrl: 'https://example.com/b' },
          ],
        },
        status: 201,
      })
    ).json().data.links;
    await call({
      method: 'POST',
      url: '/api/links/bulk',
      token: owner.token,
      payload: { links: [{ title: 'C', defaultUrl: 'https://example.com/c', slug: 'spring-sale' }] },
      status: 409,
    });
    await call({ method: 'POST', url: '/api/links/bulk-delete', token: owner.token, payload: { ids: [othersLink.id] }, status: 403 });
    await call({
      method: 'POST',
      url: '/api/links/bulk-delete',
      token: owner.token,
      payload: { ids: bulk.map((l: { id: string }) => l.id) },
      status: 200,
    });

    await call({ method: 'GET', url: '/api/links', token: owner.token, status: 200 });
    await call({
      method: 'GET',
      url: '/api/links?page=1&limit=5&sortBy=title&sortDirection=asc&tag=spring&q=spr&include=clicks,tags',
      token: owner.token,
      status: 200,
    });
    await call({ method: 'GET', url: '/api/links?limit=1000', token: owner.token, status: 400 });
    await call({ method: 'GET', url: '/api/tags', token: owner.token, status: 200 });

    await call({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/links/${othersLink.id}`, token: owner.token, status: 403 });
    await call({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { title: 'Spring sale', desktopUrl: null },
      status: 200,
    });
    await call({ method: 'PUT', url: `/api/links/${othersLink.id}`, token: owner.token, payload: { title: 'Mine now' }, status: 403 });
    await call({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { desktopURL: 'https://example.com' },
      status: 400,
    });

    await call({ method: 'GET', url: `/api/links/${link.id}/qr`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/links/${link.id}/qr?format=png&size=128&margin=2`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/links/${link.id}/qr?size=5`, token: owner.token, status: 400 });
    await call({ method: 'GET', url: `/api/links/${othersLink.id}/qr`, token: owner.token, status: 403 });
    await call({ method: 'POST', url: `/api/links/${link.id}/qr`, token: owner.token, payload: { format: 'png', size: 128 }, status: 200 });
    await call({ method: 'POST', url: `/api/links/${link.id}/qr`, token: owner.token, payload: { logo: 'bm90IGEgcG5n' }, status: 400 });
    await call({ method: 'POST', url: `/api/links/${othersLink.id}/qr`, token: owner.token, payload: {}, status: 403 });

    const doomed = (
      await api.request({
        method: 'POST',
        url: '/api/links',
        token: owner.token,
        payload: { title: 'Doomed', defaultUrl: 'https://example.com/' },
      })
    ).json().data.link;
    await call({ method: 'DELETE', url: `/api/links/${othersLink.id}`, token: owner.token, status: 403 });
    await call({ method: 'DELETE', url: `/api/links/${doomed.id}`, token: owner.token, status: 200 });
  });

  it('analytics: the report, the summary and every export layout and format', async () => {
    await recordClicks(api.env.sql, [
      rollupClick(link.id, '2026-03-01T10:00:00Z', { ...ANDROID_CHROME, country: 'DE' }),
      rollupClick(link.id, '2026-03-02T11:00:00Z', { ...IPHONE_SAFARI, country: 'US', visitor: 'visitor-2' }),
    ]);
    const range = 'startDate=2026-03-01&endDate=2026-03-03';
    const report = await call({
      method: 'GET',
      url: `/api/analytics/links/${link.id}?${range}&timeBucket=day&timezone=Europe/Paris`,
      token: owner.token,
      status: 200,
    });
    // The unique app events, validated above against the document, which names them as required.
    const { appEvents, timeSeries } = report.json().data.analytics;
    expect(Object.keys(appEvents.uniques)).toEqual(['REDIRECT', 'APP_INSTALL', 'APP_FIRST_OPEN', 'APP_RE_OPEN']);
    expect(timeSeries[0].appEvents.uniques).toEqual({ REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 });
    const schemas = doc.components.schemas as Record<string, { required?: string[] }>;
    expect(schemas.AppEvents!.required).toContain('uniques');
    expect(schemas.BucketAppEvents!.required).toContain('uniques');
    await call({ method: 'GET', url: `/api/analytics/links/${link.id}`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/analytics/links/${link.id}?timeBucket=minute`, token: owner.token, status: 400 });
    await call({ method: 'GET', url: `/api/analytics/links/${othersLink.id}`, token: owner.token, status: 403 });
    await call({ method: 'GET', url: '/api/analytics/summary', token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/analytics/summary?tag=spring&${range}&timezone=UTC`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/analytics/summary?${range}&breakdowns=true`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: '/api/analytics/summary?tag=Not%20a%20tag', token: owner.token, status: 400 });

    for (const format of ['csv', 'json']) {
      for (const layout of ['long', 'wide']) {
        const one = await call({
          method: 'GET',
          url: `/api/analytics/links/${link.id}/export?${range}&format=${format}&layout=${layout}`,
          token: owner.token,
          status: 200,
        });
        const all = await call({
          method: 'GET',
          url: `/api/analytics/export?${range}&format=${format}&layout=${layout}&tag=spring`,
          token: owner.token,
          status: 200,
        });
        for (const file of [one, all]) expect(file.body.length).toBeGreaterThan(100);
      }
    }
    await call({ method: 'GET', url: `/api/analytics/links/${link.id}/export?format=xml`, token: owner.token, status: 400 });
    await call({ method: 'GET', url: `/api/analytics/links/${othersLink.id}/export`, token: owner.token, status: 403 });
    await call({ method: 'GET', url: '/api/analytics/export?layout=tall', token: owner.token, status: 400 });
  });

  it('live streams: the account and a link, as Server-Sent Events', async () => {
    const base = `http://127.0.0.1:${new URL(await api.app.listen({ port: 0, host: '127.0.0.1' })).port}`;
    const { id: userId } = (await api.request({ method: 'GET', url: '/api/auth/me', token: owner.token })).json().data.user;
    const validateMessage = ajv.getSchema(pointer('components', 'schemas', 'LiveClicks'))!;
    for (const url of ['/api/analytics/live', `/api/analytics/links/${link.id}/live`]) {
      const controller = new AbortController();
      const response = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${owner.token}` }, signal: controller.signal });
      expect(response.status, url).toBe(200);
      await appendLiveEntry(api.env.redis, redisKeys(api.env.config.REDIS_PREFIX), userId, {
        at: new Date().toISOString(),
        links: { [link.id]: 1 },
        recent: [
          {
            at: new Date().toISOString(),
            linkId: link.id,
            platform: 'ios',
            country: 'DE',
            browser: 'Mobile Safari',
            os: 'iOS',
            referrer: 't.co',
          },
        ],
      });
      const reader = response.body!.getReader();
      let body = '';
      while (!body.includes('\n\n')) body += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      const answer = { statusCode: response.status, headers: Object.fromEntries(response.headers), body } as unknown as Answer;
      validateAnswer('GET', url, answer);
      const data = JSON.parse(/^data: (.*)$/m.exec(body)![1]!);
      expect(validateMessage(data) ? [] : validateMessage.errors, `${url} message`).toEqual([]);
    }
    await call({ method: 'GET', url: `/api/analytics/links/${othersLink.id}/live`, token: owner.token, status: 403 });
    await call({ method: 'GET', url: '/api/analytics/live', token: owner.token, headers: { 'last-event-id': 'x' }, status: 400 });
  });

  it('apps and domains', async () => {
    app = (
      await call({
        method: 'POST',
        url: '/api/apps',
        token: owner.token,
        payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.app', appStoreId: '123' },
        status: 201,
      })
    ).json().data.app;
    await call({
      method: 'POST',
      url: '/api/apps',
      token: owner.token,
      payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.app' },
      status: 409,
    });
    await call({ method: 'POST', url: '/api/apps', token: owner.token, payload: { platform: 'windows' }, status: 400 });
    await call({ method: 'GET', url: '/api/apps', token: owner.token, status: 200 });
    const othersApp = (
      await api.request({
        method: 'POST',
        url: '/api/apps',
        token: other.token,
        payload: { platform: 'android', packageName: 'com.other.app', sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
      })
    ).json().data.app;
    await call({ method: 'DELETE', url: `/api/apps/${othersApp.id}`, token: owner.token, status: 403 });
    appKey = (await call({ method: 'POST', url: `/api/apps/${app.id}/key`, token: owner.token, status: 200 })).json().data.app.key;
    await call({ method: 'POST', url: `/api/apps/${othersApp.id}/key`, token: owner.token, status: 403 });

    const opened = { method: 'POST', url: '/api/app/open', headers: { 'x-app-key': appKey } };
    const shortUrl = (await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token })).json().data.link.url;
    await call({ ...opened, payload: { url: shortUrl, openId: randomUUID(), firstLaunch: true }, status: 200 });
    // An open naming its install (counted once per install in the unique re-opens); a malformed installId is refused.
    await call({ ...opened, payload: { url: shortUrl, openId: randomUUID(), installId: randomUUID() }, status: 200 });
    await call({ ...opened, payload: { url: shortUrl, installId: 'no' }, status: 400 });
    await call({ ...opened, payload: { url: 'https://example.com/nothing-here' }, status: 404 });
    await call({ ...opened, payload: { url: 'not a url' }, status: 400 });
    await call({ ...opened, headers: { 'x-app-key': 'dla_unknown' }, payload: { url: shortUrl }, status: 401 });

    await call({ method: 'PATCH', url: `/api/apps/${app.id}`, token: owner.token, payload: { fingerprintMatching: true }, status: 200 });
    await call({ method: 'PATCH', url: `/api/apps/${app.id}`, token: owner.token, payload: { fingerprintWindowMinutes: 1 }, status: 400 });
    await call({
      method: 'PATCH',
      url: `/api/apps/${othersApp.id}`,
      token: owner.token,
      payload: { fingerprintMatching: true },
      status: 403,
    });

    // An install the pasteboard's token attributes to a link for this app, and one nothing attributes.
    const installed = { method: 'POST', url: '/api/app/install', headers: { 'x-app-key': appKey } };
    const forApp = (
      await api.request({
        method: 'POST',
        url: '/api/links',
        token: owner.token,
        payload: { title: 'For the app', defaultUrl: 'https://example.com/', iosLink: { url: 'app://x', bundleId: 'com.example.app' } },
      })
    ).json().data.link;
    const installToken = await storeVisit(api.env.sql, api.env.config.VISITOR_SALT, {
      linkId: forApp.id,
      platform: 'IOS',
      ip: '203.0.113.5',
      userAgent: UA.iphoneSafari,
      clickedAt: Date.now() - 60_000,
    });
    const matched = await call({
      ...installed,
      payload: { installId: randomUUID(), pasteboard: `${forApp.url}?dl_token=${installToken}` },
      status: 200,
    });
    expect(matched.json().data.match.matchedBy).toBe('pasteboard');
    const unmatched = await call({
      ...installed,
      payload: { installId: randomUUID(), device: { osVersion: '17.4', deviceFamily: 'phone', language: 'en' } },
      status: 200,
    });
    expect(unmatched.json().data).toEqual({ match: null });
    await call({ ...installed, payload: { installId: 'x' }, status: 400 });
    await call({ ...installed, headers: { 'x-app-key': 'dla_unknown' }, payload: { installId: randomUUID() }, status: 401 });
    // A second app, so the sweeps below still have a key once this one is deleted.
    const kept = (
      await api.request({
        method: 'POST',
        url: '/api/apps',
        token: owner.token,
        payload: { platform: 'android', packageName: 'com.example.kept', sha256CertFingerprints: [Array(32).fill('CD').join(':')] },
      })
    ).json().data.app;
    appKey = kept.key;
    await call({ method: 'DELETE', url: `/api/apps/${app.id}`, token: owner.token, status: 200 });

    domain = (
      await call({
        method: 'POST',
        url: '/api/domains',
        token: owner.token,
        payload: { hostname: 'go.owner.test', notFoundUrl: 'https://owner.test/' },
        status: 201,
      })
    ).json().data.domain;
    await call({ method: 'POST', url: '/api/domains', token: owner.token, payload: { hostname: 'go.owner.test' }, status: 409 });
    await call({ method: 'POST', url: '/api/domains', token: owner.token, payload: { hostname: '127.0.0.1' }, status: 400 });
    await call({ method: 'GET', url: '/api/domains', token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/domains/${domain.id}`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/domains/${othersDomain.id}`, token: owner.token, status: 403 });
    await call({ method: 'PUT', url: `/api/domains/${domain.id}`, token: owner.token, payload: { notFoundUrl: null }, status: 200 });
    await call({ method: 'PUT', url: `/api/domains/${othersDomain.id}`, token: owner.token, payload: { notFoundUrl: null }, status: 403 });
    await call({ method: 'POST', url: `/api/domains/${domain.id}/verify`, token: owner.token, status: 200 });
    dns.records.set(domain.verification.name, [domain.verification.value]);
    expect(
      (await call({ method: 'POST', url: `/api/domains/${domain.id}/verify`, token: owner.token, status: 200 })).json().data.domain.status,
    ).toBe('active');
    // The other account's claim on the same hostname, once this one holds it active.
    const rival = (
      await api.request({ method: 'POST', url: '/api/domains', token: other.token, payload: { hostname: 'go.owner.test' } })
    ).json().data.domain;
    dns.records.set(rival.verification.name, [rival.verification.value]);
    await call({ method: 'POST', url: `/api/domains/${rival.id}/verify`, token: other.token, status: 409 });

    await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { title: 'On the domain', defaultUrl: 'https://example.com/', domain: 'go.owner.test' },
    });
    await call({ method: 'DELETE', url: `/api/domains/${domain.id}`, token: owner.token, status: 409 });
    await call({ method: 'DELETE', url: `/api/domains/${othersDomain.id}`, token: owner.token, status: 403 });
    const spare = (
      await api.request({ method: 'POST', url: '/api/domains', token: owner.token, payload: { hostname: 'spare.owner.test' } })
    ).json().data.domain;
    await call({ method: 'DELETE', url: `/api/domains/${spare.id}`, token: owner.token, status: 200 });
  });
  it("Firebase Dynamic Links' REST operations", async () => {
    const key = (await api.request({ method: 'POST', url: '/api/auth/api-keys', token: owner.token, payload: { name: 'fdl' } })).json().data
      .apiKey.key;
    const created = await call({
      method: 'POST',
      url: `/v1/shortLinks?key=${key}`,
      payload: { dynamicLinkInfo: { link: 'https://example.com/fdl', iosInfo: { iosBundleId: 'com.example.app' } } },
      status: 200,
    });
    await call({
      method: 'POST',
      url: `/v1/shortLinks?key=${key}`,
      payload: { longDynamicLink: 'https://example.com/?apn=x' },
      status: 400,
    });
    await call({ method: 'POST', url: '/v1/shortLinks?key=dlk_unknown', payload: validBody('createShortDynamicLink'), status: 401 });
    const stats = `/v1/${encodeURIComponent(created.json().shortLink)}/linkStats`;
    await call({ method: 'GET', url: `${stats}?durationDays=7&key=${key}`, status: 200 });
    await call({ method: 'GET', url: `${stats}?durationDays=7`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `${stats}?durationDays=0&key=${key}`, status: 400 });
    await call({
      method: 'GET',
      url: `/v1/${encodeURIComponent('https://example.com/none')}/linkStats?durationDays=7&key=${key}`,
      status: 404,
    });
  });
});

/** A body each operation that takes one accepts, so that only the condition under test fails. */
const validBody = (operationId: string): unknown =>
  ({
    register: { name: 'Someone', email: `someone-${randomUUID()}@example.com`, password: 'long enough pw' },
    login: { email: owner.email, password: owner.password },
    changePassword: { currentPassword: owner.password, newPassword: owner.password },
    createApiKey: { name: 'key' },
    createLink: { title: 'Link', defaultUrl: 'https://example.com/' },
    createLinks: { links: [{ title: 'Link', defaultUrl: 'https://example.com/' }] },
    deleteLinks: { ids: [randomUUID()] },
    updateLink: { title: 'Renamed' },
    createApp: { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.other' },
    createDomain: { hostname: `x${Date.now()}.owner.test` },
    updateDomain: { notFoundUrl: null },
    openAppLink: { url: 'https://example.com/abc' },
    attributeAppInstall: { installId: randomUUID() },
    updateApp: { fingerprintMatching: false },
    createImport: { format: 'yourls' },
    createShortDynamicLink: { dynamicLinkInfo: { link: 'https://example.com/fdl' } },
    renderLinkQrCode: { color: '#112233' },
    createWebhook: { url: 'https://hooks.example.com/contract', events: ['link.created'] },
    updateWebhook: { enabled: false },
  })[operationId];

/**
 * The query an operation cannot do without, given on every call the sweeps below make of it, and
 * the values they give parameters whose valid values depend on the account (the owner's domain is
 * active once the domain calls above have run).
 */
const requiredQuery = (operationId: string) => (operationId === 'getSlugAvailability' ? 'slug=contract-slug&' : '');
const accountValues: Record<string, string> = { domain: 'go.owner.test' };

/** Firebase Dynamic Links' REST operations: FDL's paths, shapes and errors. */
const isFirebase = (path: string) => path.startsWith('/v1/');

/** The owner's credentials as the operation takes them: its app's key on the App SDK operations, else the login token. */
const ownerCredentials = (operation: Operation): { token?: string; headers?: Record<string, string> } =>
  operation.security?.some((scheme) => Object.hasOwn(scheme as object, 'appKey'))
    ? { headers: { 'x-app-key': appKey } }
    : { token: owner.token };

/** The id an operation's `{id}` takes by default: the owner's import, webhook or link. */
const defaultId = (path: string) =>
  path.startsWith('/api/imports/') ? anImport.id : path.startsWith('/api/webhooks/') ? aWebhook.id : link.id;
/** A real URL for an operation's path, its `{id}` (and `{deliveryId}`) filled with `id`. */
const urlOf = (path: string, id = defaultId(path)) =>
  path.replace('{deliveryId}', id === aWebhook?.id ? aDelivery.id : id).replace(/\{[^}]+\}/g, id);

describe('webhooks', SWEEP, () => {
  it('endpoints, secrets, the delivery log and resends; the events as the document describes them', async () => {
    const created = await call({
      method: 'POST',
      url: '/api/webhooks',
      token: owner.token,
      payload: { url: 'https://hooks.example.com/contract', events: [...WEBHOOK_EVENTS], description: 'Contract' },
      status: 201,
    });
    aWebhook = created.json().data.webhook;
    await call({
      method: 'POST',
      url: '/api/webhooks',
      token: owner.token,
      payload: { url: 'ftp://x.example.com', events: [] },
      status: 400,
    });
    for (let i = 1; i < 10; i++) {
      await api.request({
        method: 'POST',
        url: '/api/webhooks',
        token: owner.token,
        payload: { url: `https://hooks.example.com/${i}`, events: ['click'] },
      });
    }
    await call({
      method: 'POST',
      url: '/api/webhooks',
      token: owner.token,
      payload: { url: 'https://h.example.com', events: ['click'] },
      status: 409,
    });
    await call({ method: 'GET', url: '/api/webhooks', token: owner.token, status: 200 });
    await call({ method: 'GET', url: '/api/webhooks', status: 401 });
    await call({ method: 'GET', url: `/api/webhooks/${aWebhook.id}`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/webhooks/${aWebhook.id}`, token: other.token, status: 404 });
    await call({ method: 'PATCH', url: `/api/webhooks/${aWebhook.id}`, token: owner.token, payload: { description: null }, status: 200 });
    await call({ method: 'PATCH', url: `/api/webhooks/${aWebhook.id}`, token: owner.token, payload: { events: ['nope'] }, status: 400 });
    await call({ method: 'POST', url: `/api/webhooks/${aWebhook.id}/rotate-secret`, token: owner.token, status: 200 });
    await call({ method: 'POST', url: `/api/webhooks/${aWebhook.id}/rotate-secret`, token: other.token, status: 404 });

    // The events a link change queues, against the document's payload schemas.
    const queue = webhookEventQueue(api.env.redis, api.env.config.QUEUE_PREFIX);
    try {
      await api.request({ method: 'PUT', url: `/api/links/${link.id}`, token: owner.token, payload: { title: 'Hooked' } });
      const jobs = await queue.queue.getJobs(['waiting'], 0, -1);
      const events = jobs.filter((job) => job.name === WEBHOOK_EVENTS_JOB).flatMap((job) => (job.data as WebhookEventsJobData).events);
      const updated = events.find((event) => event.type === 'link.updated')!;
      const validate = ajv.getSchema(pointer('components', 'schemas', 'WebhookEvent_link_updated'))!;
      expect(validate(JSON.parse(JSON.stringify(updated))) ? [] : validate.errors).toEqual([]);
      expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    } finally {
      await queue.close();
    }

    const [deliveryId] = await webhooksRepository(api.env.sql).createDeliveries([
      { endpointId: aWebhook.id, eventId: 'evt_contract', event: 'link.created', payload: '{}' },
    ]);
    aDelivery = { id: deliveryId! };
    await call({ method: 'GET', url: `/api/webhooks/${aWebhook.id}/deliveries?page=1&limit=5`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/webhooks/${aWebhook.id}/deliveries?limit=500`, token: owner.token, status: 400 });
    const resend = `/api/webhooks/${aWebhook.id}/deliveries/${aDelivery.id}/resend`;
    await call({ method: 'POST', url: resend, token: owner.token, status: 201 });
    await call({ method: 'POST', url: resend, token: other.token, status: 404 });
    const doomed = (await api.request({ method: 'GET', url: '/api/webhooks', token: owner.token })).json().data.webhooks.at(-1);
    await call({ method: 'DELETE', url: `/api/webhooks/${doomed.id}`, token: other.token, status: 404 });
    await call({ method: 'DELETE', url: `/api/webhooks/${doomed.id}`, token: owner.token, status: 200 });
  });
});

describe('imports', SWEEP, () => {
  it('create, send the file, progress and report', async () => {
    anImport = (await call({ method: 'POST', url: '/api/imports', token: owner.token, payload: { format: 'yourls' }, status: 201 })).json()
      .data.import;
    await call({ method: 'POST', url: '/api/imports', token: owner.token, payload: { format: 'generic' }, status: 400 });
    const csvFile = { 'content-type': 'text/csv' };
    const file = { method: 'PUT', url: `/api/imports/${anImport.id}/file`, headers: csvFile };
    await call({
      ...file,
      token: owner.token,
      payload: 'keyword,url\ncontract1,https://example.com/\nx,https://example.com/\n',
      status: 200,
    });
    await call({ ...file, token: owner.token, payload: 'keyword,url\n', status: 409 });
    await call({ ...file, token: other.token, payload: 'keyword,url\n', status: 403 });
    const badColumns = (await api.request({ method: 'POST', url: '/api/imports', token: owner.token, payload: { format: 'kutt' } })).json()
      .data.import;
    await call({ ...file, url: `/api/imports/${badColumns.id}/file`, token: owner.token, payload: 'a,b\n', status: 400 });
    await call({ method: 'GET', url: `/api/imports/${anImport.id}`, token: owner.token, status: 200 });
    await call({ method: 'GET', url: `/api/imports/${anImport.id}`, token: other.token, status: 403 });
    const rows = await call({ method: 'GET', url: `/api/imports/${anImport.id}/rows?outcome=refused`, token: owner.token, status: 200 });
    expect(rows.json().data.rows).toEqual([expect.objectContaining({ line: 3, outcome: 'refused' })]);
    await call({ method: 'GET', url: `/api/imports/${anImport.id}/rows?limit=0`, token: owner.token, status: 400 });
    const upload = doc.paths['/api/imports/{id}/file']!.put!;
    // The file's own media type and size limit, not those of the JSON routes.
    expect(Object.keys((upload.requestBody as { content: object }).content)).toEqual(['text/csv']);
    expect(upload.responses['415']!.description).toBe('The body is not text/csv');
    expect(upload.responses['413']!.description).toBe('The file is larger than 52428800 bytes');
  });
});

describe('what every operation shares', SWEEP, () => {
  it('refuses an unknown query parameter with 400 naming it, on every operation but the Firebase ones', async () => {
    // Those ignore parameters they do not define, as Google's APIs ignore their system parameters (firebase-rest.test.ts).
    for (const { method, path, operation } of operations.filter((o) => !isFirebase(o.path))) {
      const response = await call({
        method,
        url: `${urlOf(path)}?${requiredQuery(operation.operationId!)}${path.includes('analytics') ? 'tags' : 'unknownParameter'}=spring`,
        ...ownerCredentials(operation),
        payload: validBody(operation.operationId!),
        status: 400,
      });
      const { error } = response.json();
      expect(error.code).toBe('INVALID_REQUEST');
      expect(error.details, `${method} ${path}`).toEqual([
        { field: path.includes('analytics') ? 'tags' : 'unknownParameter', message: 'is not a query parameter of this operation' },
      ]);
    }
  });

  it('keeps every query parameter the document names working', async () => {
    // The Firebase operations' parameters are exercised with their own calls below.
    const documented = operations
      .filter((o) => !isFirebase(o.path))
      .flatMap(({ method, path, operation }) =>
        ((operation as { parameters?: { in: string; name: string; schema?: { default?: unknown; example?: unknown } }[] }).parameters ?? [])
          .filter((p) => p.in === 'query')
          .map((p) => ({
            method,
            path,
            operationId: operation.operationId!,
            name: p.name,
            value: accountValues[p.name] ?? p.schema?.default ?? p.schema?.example,
          })),
      );
    expect(documented.length).toBeGreaterThanOrEqual(29);
    for (const { method, path, operationId, name, value } of documented) {
      const response = await call({
        method,
        url: `${urlOf(path)}?${name === 'slug' ? '' : requiredQuery(operationId)}${name}=${encodeURIComponent(String(value))}`,
        token: owner.token,
        status: 200,
      });
      expect(response.statusCode, `${method} ${path}?${name}`).toBe(200);
    }
  });

  it('answers 401 without credentials on every operation that needs them', async () => {
    for (const { method, path, operation } of operations.filter((o) => o.operation.security?.length !== 0)) {
      await call({ method, url: urlOf(path), payload: validBody(operation.operationId!), status: 401 });
    }
  });

  it('answers 404 for an unknown id on every operation with one', async () => {
    for (const { method, path, operation } of operations.filter((o) => o.path.includes('{'))) {
      const query = path.endsWith('/linkStats') ? '?durationDays=7' : '';
      await call({
        method,
        url: `${urlOf(path, randomUUID())}${query}`,
        token: owner.token,
        payload: validBody(operation.operationId!),
        status: 404,
      });
    }
  });

  it('answers 415 to a body that is not JSON and 413 to one over the limit, where a body is read', async () => {
    const reading = operations.filter((o) => o.operation.responses['415']);
    expect(reading.length).toBeGreaterThanOrEqual(17);
    const large = JSON.stringify({ title: 'x'.repeat(1024 * 1024) });
    for (const { method, path, operation } of reading) {
      const url = urlOf(path, randomUUID());
      const { token, headers } = ownerCredentials(operation);
      await call({ method, url, token, payload: 'title=x', headers: { ...headers, 'content-type': 'text/plain' }, status: 415 });
      await call({ method, url, token, payload: large, headers: { ...headers, 'content-type': 'application/json' }, status: 413 });
    }
  });
});

describe('rate limits', SWEEP, () => {
  let limited: ApiHarness;
  beforeAll(async () => {
    limited = await createApiHarness({ env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_AUTH_MAX: '1', APP_RATE_LIMIT_ADDRESS_MAX: '1' } });
  });
  afterAll(() => limited?.close());

  it('answers 429 with Retry-After on every operation once the caller is over the limit', async () => {
    const { token } = await limited.registerUser('Busy');
    await limited.request({ method: 'GET', url: '/api/auth/me', token });
    // The App SDK operations count per address (and per app key): this address spends its one call.
    await limited.request({ method: 'POST', url: '/api/app/open', payload: validBody('openAppLink') as object });
    for (const { method, path, operation } of operations) {
      const response = await limited.request({
        method: method as 'GET',
        url: urlOf(path, randomUUID()),
        token,
        payload: validBody(operation.operationId!) as object,
      });
      expect(response.statusCode, `${method} ${path}`).toBe(429);
      validateAnswer(method, urlOf(path, randomUUID()), response);
    }
  });
});

describe('the document is exercised', () => {
  it('has a validated call with a success and with an error for every operation', () => {
    const missing = operations
      .filter(({ key }) => {
        const statuses = [...(exercised.get(key) ?? [])];
        return !statuses.some((s) => s < 300) || !statuses.some((s) => s >= 400);
      })
      .map(({ key }) => key);
    expect(operations.length).toBeGreaterThanOrEqual(30);
    expect(missing).toEqual([]);
  });
});
