// Custom domains and apps against the real API and redirector (processes), through the client:
// DNS verification through a local DNS server, links picked by Host and code, the association
// files each domain serves, and the not-found URL of a domain.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, ConflictError, ServiceValidationError, type DeeplinkClient, type Domain } from '../packages/client/src/index.js';
import { redisKeys } from '@deeplink/core';
import { domainChecks, txtLookup } from '@deeplink/core/domains';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const FINGERPRINT = '14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5';

let env: TestEnvironment;
let dns: DnsServer;
let stack: Stack;
let client: DeeplinkClient;
let other: DeeplinkClient;

beforeAll(async () => {
  dns = await startDnsServer();
  env = await createTestEnvironment({ DNS_SERVERS: dns.address, RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  const account = (name: string) => ({ name, email: `${name}-${process.pid}@example.com`, password: 'a long enough password' });
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register(account('domains'));
  other = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await other.auth.register(account('other'));
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await env?.close();
  await dns?.close();
});

/** A GET to the redirector as if it were reached by `host` (fetch cannot set Host), without following redirects. */
function visitAs(
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { port } = new URL(stack.shortUrlBase);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A domain, verified through the local DNS server. */
async function activeDomain(owner: DeeplinkClient, hostname: string, notFoundUrl?: string): Promise<Domain> {
  const domain = await owner.domains.create({ hostname, ...(notFoundUrl && { notFoundUrl }) });
  dns.records.set(domain.verification.name, [domain.verification.value]);
  return owner.domains.verify(domain.id);
}

describe('domain verification', () => {
  it('stays pending without the record or with a wrong token, and turns active once the TXT record holds the token', async () => {
    const domain = await client.domains.create({ hostname: 'Go.Example.TEST.' });
    expect(domain).toMatchObject({
      hostname: 'go.example.test',
      status: 'pending',
      verification: { type: 'TXT', name: '_deeplink-challenge.go.example.test' },
    });
    expect(domain.verification.value).toMatch(/^deeplink-verification=[0-9a-f]{32}$/);

    expect((await client.domains.verify(domain.id)).status).toBe('pending');
    dns.records.set(domain.verification.name, ['deeplink-verification=0123456789abcdef0123456789abcdef', 'v=spf1 -all']);
    expect((await client.domains.verify(domain.id)).status).toBe('pending');
    // Another account's token on the record proves nothing for this one.
    const theirs = await other.domains.create({ hostname: 'go.example.test' });
    dns.records.set(domain.verification.name, [theirs.verification.value]);
    expect((await client.domains.verify(domain.id)).status).toBe('pending');

    dns.records.set(domain.verification.name, ['v=spf1 -all', domain.verification.value]);
    const active = await client.domains.verify(domain.id);
    expect(active.status).toBe('active');
    expect(Date.parse(active.verifiedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect((await client.domains.list()).map((listed) => [listed.hostname, listed.status])).toEqual([['go.example.test', 'active']]);

    // Once active here, the other account cannot take it over with its own token.
    dns.records.set(domain.verification.name, [theirs.verification.value]);
    await expect(other.domains.verify(theirs.id)).rejects.toBeInstanceOf(ConflictError);
    await expect(other.domains.get(domain.id)).rejects.toMatchObject({ status: 403 });
  });

  it("refuses malformed hostnames, the service's own, and a link on a domain that is not active and the caller's", async () => {
    for (const hostname of ['localhost', 'bad host.example', '10.0.0.1', '-x.example.com', '127.0.0.1']) {
      await expect(client.domains.create({ hostname }), hostname).rejects.toBeInstanceOf(ServiceValidationError);
    }
    const pending = await client.domains.create({ hostname: 'pending.example.test' });
    await expect(client.links.create({ title: 'x', defaultUrl: 'https://example.com', domain: pending.hostname })).rejects.toMatchObject({
      status: 400,
      details: [{ field: 'domain', message: 'is not an active domain of yours' }],
    });
    await expect(other.links.create({ title: 'x', defaultUrl: 'https://example.com', domain: 'go.example.test' })).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe('links by Host', () => {
  it('serves the same code on two domains and the default one with different destinations, and unknown hosts a 404', async () => {
    const first = await activeDomain(client, 'one.example.test');
    const second = await activeDomain(client, 'two.example.test');
    const onFirst = await client.links.create({
      title: 'One',
      defaultUrl: 'https://example.com/one',
      slug: 'spring',
      domain: first.hostname,
    });
    const onSecond = await client.links.create({
      title: 'Two',
      defaultUrl: 'https://example.com/two',
      slug: 'spring',
      domain: second.hostname,
    });
    const onDefault = await client.links.create({ title: 'Default', defaultUrl: 'https://example.com/default', slug: 'spring' });
    expect(onFirst.url).toBe('http://one.example.test/spring');
    expect(onFirst.domain).toBe('one.example.test');
    expect(onDefault).not.toHaveProperty('domain');
    await expect(
      client.links.create({ title: 'Again', defaultUrl: 'https://example.com', slug: 'spring', domain: first.hostname }),
    ).rejects.toBeInstanceOf(ConflictError);

    const { host } = new URL(stack.shortUrlBase);
    for (const [hostHeader, location] of [
      ['one.example.test', 'https://example.com/one'],
      ['TWO.example.test:443', 'https://example.com/two'],
      [host, 'https://example.com/default'],
    ] as const) {
      const response = await visitAs(hostHeader, '/spring');
      expect(response.status, hostHeader).toBe(302);
      expect(response.headers.location, hostHeader).toBe(location);
    }
    expect((await visitAs('unknown.example.test', '/spring')).status).toBe(404);
    // A pending domain is no domain yet.
    expect((await visitAs('pending.example.test', '/spring')).status).toBe(404);

    // An edit reaches the redirector on its own domain only.
    await client.links.update(onSecond.id, { defaultUrl: 'https://example.com/two-changed' });
    await expect.poll(async () => (await visitAs('two.example.test', '/spring')).headers.location).toBe('https://example.com/two-changed');
    expect((await visitAs('one.example.test', '/spring')).headers.location).toBe('https://example.com/one');

    // A domain with links stays; once they are gone it can go, and its links' host answers 404.
    await expect(client.domains.delete(first.id)).rejects.toBeInstanceOf(ConflictError);
    await client.links.delete(onFirst.id);
    expect((await visitAs('one.example.test', '/spring')).status).toBe(404);
    await client.domains.delete(first.id);
    await expect.poll(async () => (await visitAs('one.example.test', '/nothing')).status).toBe(404);
  });

  it("sends unknown codes on a domain to its not-found URL, and the default domain's to the 404 page", async () => {
    const domain = await activeDomain(client, 'nf.example.test', 'https://example.com/not-here');
    const missing = await visitAs('nf.example.test', '/no-such-code');
    expect(missing.status).toBe(302);
    expect(missing.headers.location).toBe('https://example.com/not-here');
    expect((await visitAs(new URL(stack.shortUrlBase).host, '/no-such-code')).status).toBe(404);

    await client.domains.update(domain.id, { notFoundUrl: null });
    await expect.poll(async () => (await visitAs('nf.example.test', '/no-such-code')).status).toBe(404);
  });
});

describe('apps and association files', () => {
  it("serves the account's apps on its domain in Apple's and Google's formats, and nothing on the default domain", async () => {
    await activeDomain(client, 'apps.example.test');
    const ios = await client.apps.create({
      platform: 'ios',
      name: 'Example Shop',
      teamId: 'ABCDE12345',
      bundleId: 'com.example.shop',
      appStoreId: '1234567890',
    });
    const android = await client.apps.create({
      platform: 'android',
      packageName: 'com.example.shop',
      sha256CertFingerprints: [FINGERPRINT.toLowerCase()],
    });
    expect(ios).toMatchObject({ platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.shop', appStoreId: '1234567890' });
    expect(android.sha256CertFingerprints).toEqual([FINGERPRINT]);
    expect((await client.apps.list()).map((app) => app.id)).toEqual([ios.id, android.id]);
    expect(await other.apps.list()).toEqual([]);
    await expect(client.apps.create({ platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.shop' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(other.apps.delete(ios.id)).rejects.toMatchObject({ status: 403 });

    const apple = await visitAs('apps.example.test', '/.well-known/apple-app-site-association');
    expect(apple.status).toBe(200);
    expect(apple.headers['content-type']).toBe('application/json');
    expect(apple.headers.location).toBeUndefined();
    const association = JSON.parse(apple.body) as { applinks: { details: { appIDs: string[]; components: Record<string, unknown>[] }[] } };
    expect(Object.keys(association)).toEqual(['applinks']);
    expect(association.applinks.details.map((detail) => detail.appIDs)).toEqual([['ABCDE12345.com.example.shop']]);
    expect(association.applinks.details[0]!.components.at(-1)).toMatchObject({ '/': '/*' });

    const google = await visitAs('apps.example.test', '/.well-known/assetlinks.json');
    expect(google.status).toBe(200);
    expect(google.headers['content-type']).toBe('application/json');
    expect(JSON.parse(google.body)).toEqual([
      {
        relation: ['delegate_permission/common.handle_all_urls'],
        target: { namespace: 'android_app', package_name: 'com.example.shop', sha256_cert_fingerprints: [FINGERPRINT] },
      },
    ]);

    // The default domain is shared: only the operator's apps (none here) are served there.
    const { host } = new URL(stack.shortUrlBase);
    expect((await visitAs(host, '/.well-known/apple-app-site-association')).status).toBe(404);
    expect((await visitAs(host, '/.well-known/assetlinks.json')).status).toBe(404);
    // Another account's domain does not serve these apps.
    await activeDomain(other, 'theirs.example.test');
    expect((await visitAs('theirs.example.test', '/.well-known/apple-app-site-association')).status).toBe(404);

    // The iOS page names the app and falls back to its App Store page.
    const link = await client.links.create({
      title: 'Shoes',
      defaultUrl: 'https://example.com/shoes',
      iosLink: { url: 'shop://shoes', bundleId: 'com.example.shop' },
    });
    const page = await visitAs(host, `/${new URL(link.url).pathname.slice(1)}`, { 'user-agent': UA.iphoneSafari });
    expect(page.body).toContain('Open in Example Shop');
    expect(page.body).toContain('id="fallback" href="https://apps.apple.com/app/id1234567890"');

    // Removing the apps takes them out of the files, and the fallback back to the default URL.
    await client.apps.delete(android.id);
    await expect.poll(async () => (await visitAs('apps.example.test', '/.well-known/assetlinks.json')).status).toBe(404);
    await client.apps.delete(ios.id);
    await expect.poll(async () => (await visitAs('apps.example.test', '/.well-known/apple-app-site-association')).status).toBe(404);
    await expect
      .poll(async () => (await visitAs(host, new URL(link.url).pathname, { 'user-agent': UA.iphoneSafari })).body)
      .toContain('href="https://example.com/shoes"');
  });
});

describe('a domain whose verification record is gone', () => {
  it("keeps serving through the grace period, then stops serving its links and association files, and the hostname serves the newer proof's links", async () => {
    const mover = createClient({ baseUrl: `${stack.apiUrl}/api` });
    await mover.auth.register({ name: 'mover', email: `mover-${process.pid}@example.com`, password: 'a long enough password' });
    await mover.apps.create({ platform: 'ios', teamId: 'MOVER12345', bundleId: 'com.example.mover' });
    const hostname = 'moved.example.test';
    const old = await activeDomain(mover, hostname);
    await mover.links.create({ title: 'Old', defaultUrl: 'https://example.com/old-owner', slug: 'sale', domain: hostname });
    expect((await visitAs(hostname, '/sale')).headers.location).toBe('https://example.com/old-owner');
    expect((await visitAs(hostname, '/.well-known/apple-app-site-association')).status).toBe(200);

    // The hostname changes hands: its record now holds another account's token only.
    const claim = await other.domains.create({ hostname });
    dns.records.set(claim.verification.name, [claim.verification.value]);
    // The worker's re-check (CRON_DOMAIN_CHECK), run directly, with the stack's own grace period.
    const checks = domainChecks({
      sql: env.sql,
      redis: env.redis,
      keys: redisKeys(env.config.REDIS_PREFIX),
      lookupTxt: txtLookup([dns.address]),
      graceHours: env.config.DOMAIN_VERIFICATION_GRACE_HOURS,
      log: capturingLogger().log,
    });
    await checks.recheckAll();
    expect(await mover.domains.get(old.id)).toMatchObject({ status: 'active', verificationLostAt: expect.any(String) });
    expect((await visitAs(hostname, '/sale')).headers.location).toBe('https://example.com/old-owner');
    await expect(other.domains.verify(claim.id)).rejects.toBeInstanceOf(ConflictError);

    // Past the grace period (its start moved back instead of waiting for it).
    await env.sql`UPDATE domains SET verification_lost_at = verification_lost_at - ${env.config.DOMAIN_VERIFICATION_GRACE_HOURS + 1}::int * interval '1 hour' WHERE id = ${old.id}`;
    await checks.recheckAll();
    expect(await mover.domains.get(old.id)).toMatchObject({ status: 'pending', verificationLostAt: expect.any(String) });
    await expect.poll(async () => (await visitAs(hostname, '/sale')).status).toBe(404);
    expect((await visitAs(hostname, '/.well-known/apple-app-site-association')).status).toBe(404);

    expect((await other.domains.verify(claim.id)).status).toBe('active');
    await other.links.create({ title: 'New', defaultUrl: 'https://example.com/new-owner', slug: 'sale', domain: hostname });
    await expect.poll(async () => (await visitAs(hostname, '/sale')).headers.location).toBe('https://example.com/new-owner');
    expect((await visitAs(hostname, '/.well-known/apple-app-site-association')).status).toBe(404);
  });
});
