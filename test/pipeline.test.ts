// The whole product over real HTTP: the API, the redirector and the worker as real processes on
// real Redis, BullMQ and PostgreSQL. A link made through the API, visited through the redirector,
// must show up in the rollups exactly as often as it answered a redirect.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEventStream } from '@deeplink/core';
import { clickProducer, dimensionTotals, rolledUpClicks, uniqueVisitors, waitForIdle, type ClickProducer } from '@deeplink/test-kit/clicks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, healthy, startProcess } from '@deeplink/test-kit/processes';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

// Public addresses whose country the bundled GeoIP database knows.
const ADDRESSES = { US: '8.8.8.8', AU: '1.1.1.1', GB: '81.2.69.160', JP: '133.1.0.1' };

let env: TestEnvironment;
let stack: Stack;
let producer: ClickProducer;
let queue: ClickProducer['queue'];
let apiUrl: string;
let token: string;

beforeAll(async () => {
  env = await createTestEnvironment({ TRUST_PROXY: '1', RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  apiUrl = stack.apiUrl;
  producer = clickProducer(env);
  queue = producer.queue;
  const register = await fetch(`${apiUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Pipeline', email: 'pipeline@example.com', password: 'pipeline password' }),
  });
  token = ((await register.json()) as { data: { token: string } }).data.token;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await producer?.close();
  await env?.close();
});

async function createLink(body: object): Promise<{ id: string; url: string }> {
  const response = await fetch(`${apiUrl}/api/links`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { data: { link: { id: string; url: string } } }).data.link;
}

const visit = (url: string, userAgent: string, address = ADDRESSES.US) =>
  fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent, 'x-forwarded-for': address } });

/**
 * The link's rollup total once it has reached `expected` and the queue holds no batch that could
 * still add to it, so a click counted twice would show.
 */
async function settledClicks(linkId: string, expected: number): Promise<number> {
  await expect.poll(() => rolledUpClicks(env.sql, linkId), { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(expected);
  await waitForIdle(queue);
  return rolledUpClicks(env.sql, linkId);
}

describe('the click pipeline', () => {
  it('shows a phone visit to a link made through the API in PostgreSQL moments later', async () => {
    const link = await createLink({
      title: 'App promo',
      defaultUrl: 'https://example.com/promo',
      androidLink: { url: 'shop://promo', appPackageName: 'com.example.shop' },
    });
    const response = await visit(link.url, UA.androidChrome);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(/^intent:\/\/promo#Intent;scheme=shop;package=com\.example\.shop;/);
    const started = Date.now();
    expect(await settledClicks(link.id, 1)).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await dimensionTotals(env.sql, link.id, 'platform')).toEqual({ android: 1 });
  });

  it("streams a visit through the redirector to its link's live stream, without the visitor's address", async () => {
    const link = await createLink({ title: 'Live', defaultUrl: 'https://example.com/live' });
    const controller = new AbortController();
    const stream = await fetch(`${apiUrl}/api/analytics/links/${link.id}/live`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(await (await fetch(`${stack.ops.api}/metrics`)).text()).toMatch(/^api_live_streams_open\{service="api"\} 1$/m);
    expect((await visit(link.url, UA.iphoneSafari, ADDRESSES.GB)).status).toBe(302);
    let data = '';
    for await (const item of readEventStream(stream.body as unknown as AsyncIterable<Uint8Array>)) {
      if ('event' in item) {
        data = item.data;
        break;
      }
    }
    controller.abort();
    expect(JSON.parse(data)).toMatchObject({
      clicks: 1,
      recent: [{ linkId: link.id, platform: 'ios', country: 'GB', browser: 'Mobile Safari', os: 'iOS', referrer: 'direct' }],
    });
    expect(data).not.toContain(ADDRESSES.GB);
    expect(data).not.toContain('Mozilla');
  });

  it('counts 1,000 visits exactly, with their platforms, devices, browsers, countries and operating systems, and no bots', async () => {
    // Tagged, so the summary can be asked about this link alone: the account has the other tests' links too.
    const link = await createLink({ title: 'Viral', defaultUrl: 'https://example.com/viral', tags: ['viral'] });
    const mix = [
      { ua: UA.androidChrome, country: 'US' },
      { ua: UA.iphoneSafari, country: 'AU' },
      { ua: UA.windowsChrome, country: 'GB' },
      { ua: UA.linuxFirefox, country: 'JP' },
    ] as const;
    let redirects = 0;
    for (let round = 0; round < 20; round++) {
      const batch = Array.from({ length: 50 }, (_, i) => mix[(round * 50 + i) % 4]!);
      const statuses = await Promise.all(batch.map(({ ua, country }) => visit(link.url, ua, ADDRESSES[country]).then((r) => r.status)));
      redirects += statuses.filter((s) => s === 302).length;
    }
    const bots = await Promise.all(Array.from({ length: 25 }, () => visit(link.url, UA.googlebot).then((r) => r.status)));
    expect(redirects).toBe(1000);
    expect(bots.every((s) => s === 302)).toBe(true);

    expect(await settledClicks(link.id, 1000)).toBe(1000);
    expect(await dimensionTotals(env.sql, link.id, 'platform')).toEqual({ android: 250, ios: 250, desktop: 500 });
    expect(await dimensionTotals(env.sql, link.id, 'device')).toEqual({ Mobile: 500, Desktop: 500 });
    expect(await dimensionTotals(env.sql, link.id, 'browser')).toEqual({ Chrome: 500, 'Mobile Safari': 250, Firefox: 250 });
    expect(await dimensionTotals(env.sql, link.id, 'country')).toEqual({ US: 250, AU: 250, GB: 250, JP: 250 });
    expect(await uniqueVisitors(env.sql, link.id)).toBe(4);

    // The API reports the operating systems the worker read from the agents, in the link report,
    // the summary and both export layouts.
    const get = async (path: string) => {
      const response = await fetch(`${apiUrl}/api${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      return response.json() as Promise<any>;
    };
    const oses = { Android: 250, iOS: 250, Windows: 250, Linux: 250 };
    // Yesterday and today (UTC), so visits made around midnight are in the range too.
    const range = `startDate=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&endDate=${new Date().toISOString().slice(0, 10)}`;
    const report = (await get(`/analytics/links/${link.id}?${range}`)).data.analytics;
    expect(report.os).toEqual(oses);
    expect(report.totalClicks).toBe(1000);
    expect((await get(`/analytics/summary?${range}&tag=viral&breakdowns=true`)).data.summary.os).toMatchObject(oses);
    const long: { dimension: string; value: string; clicks: number }[] = await get(
      `/analytics/links/${link.id}/export?${range}&format=json`,
    );
    const longOs: Record<string, number> = {};
    for (const row of long) if (row.dimension === 'os') longOs[row.value] = (longOs[row.value] ?? 0) + row.clicks;
    expect(longOs).toEqual(oses);
    const wide: Record<string, number>[] = await get(`/analytics/links/${link.id}/export?${range}&format=json&layout=wide`);
    const column = (name: string) => wide.reduce((sum, row) => sum + (row[name] ?? 0), 0);
    expect(['os_Android', 'os_iOS', 'os_Windows', 'os_Linux', 'os_Other'].map(column)).toEqual([250, 250, 250, 250, 0]);
  });

  it('counts every click that got a 302 when the redirector is stopped under load', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const second = await startProcess('redirector', {
      env: { ...env.env, LOG_LEVEL: 'info', REDIRECTOR_PORT: String(port), CLICK_FLUSH_MS: '1000', CLICK_BATCH_SIZE: '100000' },
      ready: healthy(url),
    });
    const link = await createLink({ title: 'Under load', defaultUrl: 'https://example.com/load' });
    const code = link.url.split('/').pop();
    let redirects = 0;
    let stopping: Promise<number | null> | undefined;
    const clients = Array.from({ length: 8 }, async () => {
      for (;;) {
        try {
          const response = await visit(`${url}/${code}`, UA.windowsChrome);
          if (response.status === 302) redirects++;
        } catch {
          return; // connection refused: the redirector has stopped listening
        }
        // A long flush interval keeps the clicks in memory until the signal arrives.
        if (redirects >= 300 && !stopping) stopping = second.stop();
      }
    });
    await Promise.all(clients);
    expect(await stopping).toBe(0);
    expect(redirects).toBeGreaterThanOrEqual(300);
    expect(await settledClicks(link.id, redirects)).toBe(redirects);
  });
});
