import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { usersRepository } from '@deeplink/core/db';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { ACCOUNT_TTL_MS, accountCache, type AccountCache } from '../src/domain/accounts.js';
import { createApiHarness, type ApiHarness } from './harness.js';

describe('accounts held in memory', () => {
  let env: TestEnvironment;
  const opened: { accounts: AccountCache; subscriber: Redis }[] = [];
  let time = Date.UTC(2026, 10, 24, 12);

  beforeAll(async () => {
    env = await createTestEnvironment();
  });
  afterEach(async () => {
    for (const { accounts, subscriber } of opened.splice(0)) {
      await accounts.close();
      subscriber.disconnect();
    }
  });
  afterAll(() => env?.close());

  const version = async (accounts: AccountCache, userId: string) => (await accounts.get(userId))?.tokenVersion;

  /** A user straight in the database, as registration makes one. */
  const newUser = async () => {
    const user = await usersRepository(env.sql).create({ name: 'V', email: `v${Math.random()}@example.com`, passwordHash: 'x' });
    return user!.id;
  };

  /** Accounts as one API process holds them, on a clock the test moves; `reads` counts PostgreSQL reads. */
  async function open(options: { gate?: Promise<void> } = {}) {
    const users = usersRepository(env.sql);
    const counter = { reads: 0, answered: 0 };
    const counted = {
      ...users,
      async findAccount(id: string) {
        counter.reads++;
        const account = await users.findAccount(id);
        counter.answered++;
        await options.gate;
        return account;
      },
    };
    const subscriber = env.redis.duplicate();
    const accounts = accountCache({
      users: counted,
      redis: env.redis,
      subscriber,
      keys: redisKeys(env.config.REDIS_PREFIX),
      log: console,
      now: () => time,
    });
    opened.push({ accounts, subscriber });
    // The subscription is in place once Redis counts every open connection as a subscriber of the
    // channel (counting only this one's would pass as soon as an earlier one was in).
    await expect
      .poll(async () => (await env.redis.pubsub('NUMSUB', `${env.config.REDIS_PREFIX}token-revocations`))[1])
      .toBeGreaterThanOrEqual(opened.length);
    return { accounts, subscriber, counter };
  }

  it('reads an account once, then answers from memory until the TTL passes', async () => {
    const userId = await newUser();
    const { accounts, counter } = await open();
    // The profile and the version, without the password hash.
    expect(await accounts.get(userId)).toEqual({ id: userId, name: 'V', email: expect.stringMatching(/@example\.com$/), tokenVersion: 0 });
    expect(await version(accounts, userId)).toBe(0);
    expect(counter.reads).toBe(1);

    // A change PostgreSQL alone knows of (no message) is seen once the TTL has passed.
    await usersRepository(env.sql).revokeTokens(userId);
    time += ACCOUNT_TTL_MS - 1;
    expect(await version(accounts, userId)).toBe(0);
    time += 1;
    expect(await version(accounts, userId)).toBe(1);
    expect(counter.reads).toBe(2);

    // A user that does not exist is not remembered as missing: it is simply asked for again.
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await accounts.get(unknown)).toBeUndefined();
    expect(await accounts.get(unknown)).toBeUndefined();
    expect(counter.reads).toBe(4);
  });

  it('forgets a revoked version in every process at once, over pub/sub', async () => {
    const userId = await newUser();
    const [here, there] = [await open(), await open()];
    expect(await version(here.accounts, userId)).toBe(0);
    expect(await version(there.accounts, userId)).toBe(0);

    expect(await here.accounts.revoke(userId)).toBe(1);
    expect(await version(here.accounts, userId)).toBe(1);
    await expect.poll(() => version(there.accounts, userId)).toBe(1);
  });

  it('forgets every version when its subscriber reconnects, since messages sent meanwhile are lost', async () => {
    const userId = await newUser();
    const { accounts, subscriber, counter } = await open();
    expect(await version(accounts, userId)).toBe(0);
    await usersRepository(env.sql).revokeTokens(userId);
    expect(await version(accounts, userId)).toBe(0);

    subscriber.disconnect(true);
    await expect.poll(() => version(accounts, userId)).toBe(1);
    expect(counter.reads).toBe(2);
  });

  it('does not keep a version read while a revocation of the same user went through', async () => {
    const userId = await newUser();
    let release!: () => void;
    const { accounts, counter } = await open({ gate: new Promise<void>((resolve) => (release = resolve)) });
    // The read finds version 0 in PostgreSQL, then is held; meanwhile the user is revoked.
    const reading = accounts.get(userId);
    await expect.poll(() => counter.answered).toBe(1);
    expect(await accounts.revoke(userId)).toBe(1);
    release();
    expect((await reading)?.tokenVersion).toBe(0);
    // That answer was not remembered: the next request reads the revoked version.
    expect(await version(accounts, userId)).toBe(1);
  });
});

describe('revocation across API instances', () => {
  let first: ApiHarness;
  let second: ApiHarness;
  beforeAll(async () => {
    first = await createApiHarness();
    second = await first.sibling();
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('refuses a token on every instance as soon as one of them logs the user out everywhere', async () => {
    const { token } = await first.registerUser();
    const me = (api: ApiHarness) => api.request({ method: 'GET', url: '/api/auth/me', token });
    expect((await me(first)).statusCode).toBe(200);
    expect((await me(second)).statusCode).toBe(200);
    expect((await first.request({ method: 'POST', url: '/api/auth/logout-all', token })).statusCode).toBe(200);
    expect((await me(first)).statusCode).toBe(401);
    await expect.poll(async () => (await me(second)).statusCode).toBe(401);
  });
});
