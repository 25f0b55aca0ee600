import { BoundedMap, type RedisKeys } from '@deeplink/core';
import type { AccountRecord, UsersRepository } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';

/**
 * How long an account is answered from memory before PostgreSQL is asked again. Revocations
 * reach every API instance at once over pub/sub; this only bounds how long one could go unseen if
 * its message were lost while the subscriber stayed connected (after a reconnect every account
 * is read again anyway).
 */
export const ACCOUNT_TTL_MS = 10_000;
/** Accounts one process remembers: a few hundred bytes each. */
const ACCOUNTS_MAX = 100_000;

/**
 * What every authenticated request needs of its user, kept in memory: the profile (`GET
 * /auth/me`) and the token version that decides whether a login token still counts. A
 * revocation (logout everywhere, a new password) bumps the version in PostgreSQL and publishes the
 * user id on `tokenRevocations`; every API instance forgets that account when the message
 * arrives, so its next request reads the new version. Nothing else about an account changes
 * once it exists. Password hashes are never kept here.
 */
export function accountCache(deps: {
  users: UsersRepository;
  /** Publishes revocations. */
  redis: RedisClient;
  /** Receives them (a connection in subscriber mode can send nothing else). */
  subscriber: RedisClient;
  keys: RedisKeys;
  log: { warn(fields: Record<string, unknown>, msg: string): void };
  /** The clock the TTL is read against (tests move it). */
  now?: () => number;
}) {
  const { users, redis, subscriber, keys, log } = deps;
  const now = deps.now ?? Date.now;
  const accounts = new BoundedMap<string, { account: AccountRecord; until: number }>(ACCOUNTS_MAX);
  /**
   * Counts revocations seen. A read that started before one must not keep what it read: it may be
   * the version just revoked.
   */
  let revocations = 0;
  const forget = (userId: string) => {
    revocations++;
    accounts.delete(userId);
  };

  const onMessage = (channel: string, userId: string) => {
    if (channel === keys.tokenRevocations) forget(userId);
  };
  // Messages published while the subscriber was disconnected are lost: forget everything once.
  let subscribedBefore = subscriber.status === 'ready';
  const onReady = () => {
    if (subscribedBefore) {
      revocations++;
      accounts.clear();
    }
    subscribedBefore = true;
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  // Queued while Redis is away; ioredis subscribes again after every reconnect.
  subscriber.subscribe(keys.tokenRevocations).catch((error: unknown) => log.warn({ err: error }, 'token revocation subscribe failed'));

  return {
    /** The user's account, or undefined for a user that no longer exists. */
    async get(userId: string): Promise<AccountRecord | undefined> {
      const known = accounts.get(userId);
      if (known && known.until > now()) return known.account;
      const seen = revocations;
      const account = await users.findAccount(userId);
      if (account && seen === revocations) accounts.set(userId, { account, until: now() + ACCOUNT_TTL_MS });
      return account;
    },

    /** Ends every login token of the user (setting a new password hash when given); returns the new version. */
    async revoke(userId: string, passwordHash?: string): Promise<number> {
      const version = await users.revokeTokens(userId, passwordHash);
      forget(userId);
      await redis.publish(keys.tokenRevocations, userId).catch((error: unknown) => {
        log.warn(
          { err: error },
          `token revocation not published; other API instances may accept older tokens for up to ${ACCOUNT_TTL_MS / 1000} s`,
        );
      });
      return version;
    },

    /** Stops listening for revocations (the subscriber connection is its owner's to close). */
    async close(): Promise<void> {
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      await subscriber.unsubscribe(keys.tokenRevocations).catch(() => {});
    },
  };
}
export type AccountCache = ReturnType<typeof accountCache>;
