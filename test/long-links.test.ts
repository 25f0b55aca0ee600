// Long dynamic links end to end: the API, the redirector and the worker as processes. A custom
// domain with allowed URL patterns answers long links; each distinct one becomes a link of the
// domain's owner, listed by the API, and its clicks are rolled up by the worker under that link.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DeeplinkClient } from '../packages/client/src/index.js';
import { clickProducer, rolledUpClicks, waitForIdle, type ClickProducer } from '@deeplink/test-kit/clicks';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const HOSTNAME = 'go.long-links.test';

let env: TestEnvironment;
let dns: DnsServer;
let stack: Stack;
let producer: ClickProducer;
let client: DeeplinkClient;

beforeAll(async () => {
  dns = await startDnsServer();
  env = await createTestEnvironment({ DNS_SERVERS: dns.address, RATE_LIMIT_MAX: '100000', UNKNOWN_CODE_BURST: '1000' });
  stack = await startStack(env.env);
  producer = clickProducer(env);
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register({ name: 'Long', email: `long-${process.pid}@example.com`, password: 'a long enough password' });
  const domain = await client.domains.create({ hostname: HOSTNAME, allowedUrlPatterns: ['https://shop.example.com/*'] });
  dns.records.set(domain.verification.name, [domain.verification.value]);
  expect((await client.domains.verify(domain.id)).status).toBe('active');
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await producer?.close();
  await env?.close();
  await dns?.close();
});

/** A GET of `path` on the redirector as if reached by HOSTNAME, without following redirects. */
function visit(path: string, userAgent: string): Promise<{ status: number; location: string | undefined }> {
  const { port } = new URL(stack.shortUrlBase);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: HOSTNAME, 'user-agent': userAgent } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('long links', () => {
  it('count each distinct long link as a link of its own, with its clicks rolled up by the worker', async () => {
    const shoes = `/?${new URLSearchParams({ link: 'https://shop.example.com/shoes', apn: 'com.example.shop', utm_source: 'mail' })}`;
    const hats = `/?${new URLSearchParams({ link: 'https://shop.example.com/hats' })}`;
    for (let i = 0; i < 3; i++)
      expect((await visit(shoes, UA.windowsChrome)).location).toBe('https://shop.example.com/shoes?utm_source=mail');
    expect((await visit(shoes, UA.androidChrome)).location).toMatch(/^intent:\/\/shop\.example\.com\/shoes#Intent;/);
    expect((await visit(hats, UA.iphoneSafari)).status).toBe(302);
    expect((await visit(hats, UA.windowsChrome)).location).toBe('https://shop.example.com/hats');
    // Outside the domain's patterns: no answer, no link.
    expect((await visit(`/?${new URLSearchParams({ link: 'https://evil.test/' })}`, UA.windowsChrome)).status).toBe(404);

    const { links } = await client.links.list();
    const byUrl = Object.fromEntries(links.map((link) => [link.defaultUrl, link]));
    expect(Object.keys(byUrl).sort()).toEqual(['https://shop.example.com/hats', 'https://shop.example.com/shoes']);
    const shoesLink = byUrl['https://shop.example.com/shoes']!;
    expect(shoesLink.url).toMatch(new RegExp(`^https?://${HOSTNAME.replace(/\./g, '\\.')}(:\\d+)?/[A-Za-z0-9]{7}$`));
    expect(await client.links.get(shoesLink.id)).toMatchObject({
      domain: HOSTNAME,
      androidLink: { appPackageName: 'com.example.shop' },
      customParameters: { utm_source: 'mail' },
    });

    await expect.poll(() => rolledUpClicks(env.sql, shoesLink.id), { timeout: 20_000, interval: 100 }).toBe(4);
    await expect
      .poll(() => rolledUpClicks(env.sql, byUrl['https://shop.example.com/hats']!.id), { timeout: 20_000, interval: 100 })
      .toBe(2);
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, shoesLink.id)).toBe(4);
  });
});
