// The scheduled re-check of verified custom domains: real PostgreSQL, Redis and a local DNS server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { challengeName, loadConfig, redisKeys } from '@deeplink/core';
import { type DomainRecord, domainsRepository, linksRepository, toCachedDomain, usersRepository } from '@deeplink/core/db';
import { domainChecks, txtLookup } from '@deeplink/core/domains';
import { cacheDomain, cacheLink } from '@deeplink/core/redis';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { maintenanceTasks, type MaintenanceTask } from '../src/maintenance.js';
import { capturingLogger, clickProducer } from './helpers.js';

let env: TestEnvironment;
let dns: DnsServer;
let keys: ReturnType<typeof redisKeys>;
let subscriber: Redis;
const invalidations: string[] = [];
let userId: string;

beforeAll(async () => {
  dns = await startDnsServer();
  env = await createTestEnvironment({ DNS_SERVERS: dns.address, DOMAIN_VERIFICATION_GRACE_HOURS: '2' });
  keys = redisKeys(env.config.REDIS_PREFIX);
  subscriber = env.redis.duplicate();
  await subscriber.subscribe(keys.domainInvalidations, keys.linkInvalidations);
  subscriber.on('message', (_channel, message: string) => invalidations.push(message));
  userId = (await usersRepository(env.sql).create({ name: 'Owner', email: 'owner@example.com', passwordHash: 'x' }))!.id;
});
afterAll(async () => {
  subscriber?.disconnect();
  await env?.close();
  await dns?.close();
});

/** An active domain whose TXT record holds its token, cached for the redirectors as the API does. */
async function activeDomain(hostname: string): Promise<DomainRecord> {
  const domains = domainsRepository(env.sql);
  const token = `deeplink-verification=${hostname}`;
  const domain = (await domains.activate((await domains.create(userId, hostname, token, undefined)).id))!;
  dns.records.set(challengeName(hostname), ['v=spf1 -all', token]);
  await cacheDomain(env.redis, keys, hostname, toCachedDomain(domain, []));
  return domain;
}

/** The worker's task as `config` describes it. */
async function recheckTask<T>(
  config: typeof env.config,
  log: ReturnType<typeof capturingLogger>['log'],
  use: (task: MaintenanceTask) => Promise<T> | T,
): Promise<T> {
  const producer = clickProducer(env);
  try {
    return await use(
      maintenanceTasks({ config, sql: env.sql, redis: env.redis, queue: producer.queue, log }).find(
        (task) => task.name === 'recheck-domains',
      )!,
    );
  } finally {
    await producer.close();
  }
}

/** Runs the task directly instead of waiting for CRON_DOMAIN_CHECK. */
const recheck = (log = capturingLogger().log) => recheckTask(env.config, log, (task) => task.run());

const stored = async (id: string) => (await domainsRepository(env.sql).findById(id))!;

describe('recheck-domains', () => {
  it('records a lost record, keeps serving through the grace period, then unverifies the domain and drops it and its links from the caches', async () => {
    const kept = await activeDomain('kept.example.test');
    const lost = await activeDomain('lost.example.test');
    const link = await linksRepository(env.sql).create(
      userId,
      'spring',
      { title: 'Spring', defaultUrl: 'https://example.com/spring' },
      lost.id,
    );
    await cacheLink(env.redis, keys, link);
    dns.records.delete(challengeName(lost.hostname));

    const first = capturingLogger();
    expect(await recheck(first.log)).toEqual({ checked: 2, missing: 1, released: 0, failed: 0 });
    const inGrace = await stored(lost.id);
    expect(inGrace.verifiedAt).not.toBeNull();
    expect(inGrace.verificationLostAt!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(inGrace.lastCheckedAt).not.toBeNull();
    expect((await stored(kept.id)).verificationLostAt).toBeNull();
    expect(await env.redis.exists(keys.domain(lost.hostname), keys.link('lost.example.test/spring'))).toBe(2);
    expect(first.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: expect.stringContaining('verification record lost'),
        hostname: lost.hostname,
        userId,
        domainId: lost.id,
      }),
    );

    // A second miss inside the grace period keeps the first loss's time.
    await recheck();
    expect((await stored(lost.id)).verificationLostAt).toEqual(inGrace.verificationLostAt);
    expect((await stored(lost.id)).verifiedAt).not.toBeNull();

    // Three hours later, as far as the grace period of two is concerned.
    await env.sql`UPDATE domains SET verification_lost_at = verification_lost_at - interval '3 hours' WHERE id = ${lost.id}`;
    invalidations.length = 0;
    const last = capturingLogger();
    expect(await recheck(last.log)).toEqual({ checked: 2, missing: 1, released: 1, failed: 0 });
    const released = await stored(lost.id);
    expect(released.verifiedAt).toBeNull();
    expect(released.verificationLostAt).not.toBeNull();
    expect(last.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: expect.stringContaining('custom domain unverified'), hostname: lost.hostname }),
    );
    // Nothing serves it any more: no cached records, no record from PostgreSQL, and the redirectors were told.
    expect(await env.redis.exists(keys.domain(lost.hostname), keys.link('lost.example.test/spring'))).toBe(0);
    expect(await domainsRepository(env.sql).cachedDomain(lost.hostname)).toBeUndefined();
    expect(await linksRepository(env.sql).findByCode('spring', lost.hostname)).toBeUndefined();
    await expect.poll(() => invalidations.sort(), { timeout: 10_000 }).toEqual(['lost.example.test', 'lost.example.test/spring']);
    // Pending domains are not checked again: the next run looks at the kept one only.
    expect(await recheck()).toEqual({ checked: 1, missing: 0, released: 0, failed: 0 });
  });

  it('ends a loss when the record holds the token again within the grace period', async () => {
    const domain = await activeDomain('back.example.test');
    const record = dns.records.get(challengeName(domain.hostname))!;
    dns.records.set(challengeName(domain.hostname), ['v=spf1 -all']);
    const checks = domainChecks({
      sql: env.sql,
      redis: env.redis,
      keys,
      lookupTxt: txtLookup([dns.address]),
      graceHours: 2,
      log: capturingLogger().log,
    });
    await checks.recheckAll();
    expect((await stored(domain.id)).verificationLostAt).not.toBeNull();

    dns.records.set(challengeName(domain.hostname), record);
    const { log, lines } = capturingLogger();
    await domainChecks({ sql: env.sql, redis: env.redis, keys, lookupTxt: txtLookup([dns.address]), graceHours: 2, log }).recheckAll();
    const after = await stored(domain.id);
    expect(after.verificationLostAt).toBeNull();
    expect(after.verifiedAt).not.toBeNull();
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', msg: 'custom domain verification record found again', hostname: domain.hostname }),
    );
  });

  it('decides nothing when DNS does not answer', async () => {
    const domain = await activeDomain('unanswered.example.test');
    await env.sql`UPDATE domains SET verification_lost_at = now() - interval '5 hours' WHERE id = ${domain.id}`;
    // A server that is gone: its port refuses every question.
    const gone = await startDnsServer();
    await gone.close();
    const { log, lines } = capturingLogger();
    const result = await domainChecks({
      sql: env.sql,
      redis: env.redis,
      keys,
      lookupTxt: txtLookup([gone.address]),
      graceHours: 2,
      log,
    }).recheckAll();
    expect(result).toMatchObject({ checked: 0, missing: 0, released: 0 });
    expect(result.failed).toBeGreaterThanOrEqual(1);
    // Its loss is past the grace period, yet without an answer it stays active.
    expect((await stored(domain.id)).verifiedAt).not.toBeNull();
    expect(lines.some((line) => line.msg === 'custom domain re-check: TXT lookup failed')).toBe(true);
  }, 60_000);

  it('takes its schedule from CRON_DOMAIN_CHECK and its grace period from DOMAIN_VERIFICATION_GRACE_HOURS', async () => {
    const config = loadConfig({ ...env.env, CRON_DOMAIN_CHECK: '*/10 * * * *', DOMAIN_VERIFICATION_GRACE_HOURS: '24' });
    const task = await recheckTask(config, capturingLogger().log, (found) => found);
    expect(task).toMatchObject({ setting: 'CRON_DOMAIN_CHECK', schedule: '*/10 * * * *' });
    expect(task.purpose).toContain('24 hours');
    expect(() => loadConfig({ DOMAIN_VERIFICATION_GRACE_HOURS: '-1' })).toThrow(/DOMAIN_VERIFICATION_GRACE_HOURS/);
  });
});
