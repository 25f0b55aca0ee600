// Imported links through the real services: a Takeout file imported through the client onto a
// custom domain (verified through a local DNS server) and onto the default one, then visited
// through the redirector as the old FDL links would be once DNS points here.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DeeplinkClient } from '../packages/client/src/index.js';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';
import { csv, TAKEOUT_HEADER, takeoutRow } from '../services/api/test/import-files.js';

let env: TestEnvironment;
let dns: DnsServer;
let stack: Stack;
let client: DeeplinkClient;

beforeAll(async () => {
  dns = await startDnsServer();
  env = await createTestEnvironment({ DNS_SERVERS: dns.address, RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register({ name: 'Importer', email: `importer-${process.pid}@example.com`, password: 'a long enough password' });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await env?.close();
  await dns?.close();
});

/** A GET to the redirector as if it were reached by `host`, without following redirects. */
function visit(host: string, path: string, userAgent: string): Promise<{ status: number; location?: string }> {
  const { port } = new URL(stack.shortUrlBase);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, 'user-agent': userAgent } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('imported links', () => {
  it('answer in the redirector on their custom domain and on the default one, as links made in the API do', async () => {
    const domain = await client.domains.create({ hostname: 'links.shop.test' });
    dns.records.set(domain.verification.name, [domain.verification.value]);
    expect((await client.domains.verify(domain.id)).status).toBe('active');

    const file = csv([TAKEOUT_HEADER, takeoutRow(1, 'e2e'), takeoutRow(2, 'e2e')]);
    const onDomain = await client.imports.create({ format: 'takeout', domain: 'links.shop.test' });
    expect(await client.imports.upload(onDomain.id, file)).toMatchObject({ status: 'done', created: 2, domain: 'links.shop.test' });
    const onDefault = await client.imports.create({ format: 'takeout' });
    expect(await client.imports.upload(onDefault.id, file)).toMatchObject({ status: 'done', created: 2 });

    const { host: defaultHost } = new URL(stack.shortUrlBase);
    for (const host of ['links.shop.test', defaultHost]) {
      // The desktop fallback (ofl), with the link's utm_* parameters as FDL added them.
      expect(await visit(host, '/e2e1', UA.windowsChrome)).toEqual({
        status: 302,
        location:
          'https://shop.example.com/desktop/1?utm_term=shoes&utm_medium=email&utm_source=newsletter&utm_content=banner&utm_campaign=spring',
      });
      const android = await visit(host, '/e2e2', UA.androidChrome);
      expect(android.status).toBe(302);
      expect(android.location).toMatch(/^intent:\/\/shop\.example\.com\/item\/2.*package=com\.example\.shop/);
      expect((await visit(host, '/e2e3', UA.windowsChrome)).status).toBe(404);
    }
  });
});
