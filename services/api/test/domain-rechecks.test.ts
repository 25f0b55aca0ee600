// A verified domain whose TXT record is gone: what its owner sees, and how a newer proof of the
// hostname by another account wins once the grace period is over (real API, PostgreSQL, Redis, DNS).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let dns: DnsServer;
let keys: ReturnType<typeof redisKeys>;

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address, DOMAIN_VERIFICATION_GRACE_HOURS: '48' } });
  keys = redisKeys(api.env.config.REDIS_PREFIX);
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

type DomainBody = {
  id: string;
  hostname: string;
  status: string;
  verification: { name: string; value: string };
  lastCheckedAt?: string;
  verificationLostAt?: string;
};

async function addDomain(token: string, hostname: string): Promise<DomainBody> {
  const response = await api.request({ method: 'POST', url: '/api/domains', token, payload: { hostname } });
  expect(response.statusCode).toBe(201);
  return response.json().data.domain;
}
const verify = (token: string, id: string) => api.request({ method: 'POST', url: `/api/domains/${id}/verify`, token });
const getDomain = async (token: string, id: string): Promise<DomainBody> =>
  (await api.request({ method: 'GET', url: `/api/domains/${id}`, token })).json().data.domain;
/** Moves the start of a domain's loss `hours` into the past, as if that much time had gone by. */
const age = (id: string, hours: number) =>
  api.env.sql`UPDATE domains SET verification_lost_at = verification_lost_at - ${hours}::int * interval '1 hour' WHERE id = ${id}`;

describe('a lost verification record', () => {
  it("is shown to the owner, and lets a newer proof of the hostname win once it outlasts the grace period, releasing the old owner's links", async () => {
    const first = await api.registerUser('First');
    const second = await api.registerUser('Second');
    const theirs = await addDomain(first.token, 'claimed.example.test');
    dns.records.set(theirs.verification.name, [theirs.verification.value]);
    const active = (await verify(first.token, theirs.id)).json().data.domain as DomainBody;
    expect(active).toMatchObject({ status: 'active', lastCheckedAt: expect.any(String) });
    expect(active).not.toHaveProperty('verificationLostAt');
    const link = (
      await api.request({
        method: 'POST',
        url: '/api/links',
        token: first.token,
        payload: { title: 'Old', defaultUrl: 'https://example.com/old', slug: 'offer', domain: 'claimed.example.test' },
      })
    ).json().data.link;
    expect(await api.env.redis.exists(keys.link('claimed.example.test/offer'), keys.domain('claimed.example.test'))).toBe(2);

    // The hostname changes hands in DNS: the second account publishes its own token in place of the first's.
    const mine = await addDomain(second.token, 'claimed.example.test');
    dns.records.set(mine.verification.name, [mine.verification.value]);
    const refused = await verify(second.token, mine.id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      success: false,
      error: { details: [{ field: 'hostname', message: 'is active on another account' }] },
    });
    // That lookup showed the first account's token missing: its loss is recorded, and its owner sees it.
    const losing = await getDomain(first.token, theirs.id);
    expect(losing).toMatchObject({ status: 'active', verificationLostAt: expect.any(String) });
    expect(Date.parse(losing.verificationLostAt!)).toBeGreaterThan(Date.now() - 60_000);

    // Within the grace period the first account keeps the domain; after it, the newer proof wins.
    await age(theirs.id, 47);
    expect((await verify(second.token, mine.id)).statusCode).toBe(409);
    await age(theirs.id, 2);
    const won = await verify(second.token, mine.id);
    expect(won.statusCode).toBe(200);
    expect(won.json().data.domain).toMatchObject({ status: 'active', hostname: 'claimed.example.test' });
    expect(won.json().data.domain).not.toHaveProperty('verificationLostAt');

    const released = await getDomain(first.token, theirs.id);
    expect(released).toMatchObject({ status: 'pending', verificationLostAt: expect.any(String) });
    // The first account's link no longer resolves there, in PostgreSQL or in the cache; the hostname's record is the second's.
    expect(await linksRepository(api.env.sql).findByCode('offer', 'claimed.example.test')).toBeUndefined();
    expect(await api.env.redis.get(keys.link('claimed.example.test/offer'))).toBeNull();
    expect(JSON.parse((await api.env.redis.get(keys.domain('claimed.example.test')))!)).toMatchObject({ id: mine.id });
    // Editing it does not put it back in the cache under a hostname that is another account's now.
    const edited = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: first.token,
      payload: { defaultUrl: 'https://example.com/edited' },
    });
    expect(edited.statusCode).toBe(200);
    expect(await api.env.redis.get(keys.link('claimed.example.test/offer'))).toBeNull();
    // And the first account cannot take it back with its old token while the second holds it.
    dns.records.set(theirs.verification.name, [theirs.verification.value, mine.verification.value]);
    expect((await verify(first.token, theirs.id)).statusCode).toBe(409);
  });

  it('is cleared by a verify call once the record holds the token again', async () => {
    const owner = await api.registerUser('Owner');
    const domain = await addDomain(owner.token, 'flaky.example.test');
    dns.records.set(domain.verification.name, [domain.verification.value]);
    expect((await verify(owner.token, domain.id)).json().data.domain.status).toBe('active');
    dns.records.set(domain.verification.name, ['v=spf1 -all']);
    expect((await verify(owner.token, domain.id)).json().data.domain).toMatchObject({
      status: 'active',
      verificationLostAt: expect.any(String),
    });
    dns.records.set(domain.verification.name, [domain.verification.value]);
    const fixed = (await verify(owner.token, domain.id)).json().data.domain;
    expect(fixed.status).toBe('active');
    expect(fixed).not.toHaveProperty('verificationLostAt');
  });
});
