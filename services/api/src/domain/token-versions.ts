import { BoundedMap, type RedisKeys } from '@deeplink/core';
import type { UsersRepository } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';

/**
 * How long a user's version is answered from memory before PostgreSQL is asked again. Revocations
 * reach every API instance at once over pub/sub; this only bounds how long one could go unseen if
 * its message were lost while the subscriber stayed connected (after a reconnect every version is
 * read again anyway).
 */
export const TOKEN_VERSION_TTL_MS = 10_000;
/** Users whose versions one process remembers: a few dozen bytes each. */
const VERSIONS_MAX = 100_000;

/**
 * Users' current login token versions, read on every request with a login token: from memory,
 * else from PostgreSQL. A revocation (logout everywhere, a new password) bumps the version in
 * PostgreSQL and publishes the user id on `tokenRevocations`; every API instance forgets that
 * user's version when the message arrives, so the next request reads the new one.
 */
export function tokenVersions(deps: {
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
  const versions = new BoundedMap<string, { version: number; until: number }>(VERSIONS_MAX);
  /**
   * Counts revocations seen. A read that started before one must not cache what it read: it may
   * be the version just revoked.
   */
  let revocations = 0;
  const forget = (userId: string) => {
    revocations++;
    versions.delete(userId);
  };

  const onMessage = (channel: string, userId: string) => {
    if (channel === keys.tokenRevocations) forget(userId);
  };
  // Messages published while the subscriber was disconnected are lost: forget everything once.
  let subscribedBefore = subscriber.status === 'ready';
  const onReady = () => {
    if (subscribedBefore) {
      revocations++;
      versions.clear();
    }
    subscribedBefore = true;
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  // Queued while Redis is away; ioredis subscribes again after every reconnect.
  subscriber.subscribe(keys.tokenRevocations).catch((error: unknown) => log.warn({ err: error }, 'token revocation subscribe failed'));

  return {
    /** The user's version, or undefined for a user that no longer exists. */
    async current(userId: string): Promise<number | undefined> {
      const known = versions.get(userId);
      if (known && known.until > now()) return known.version;
      const seen = revocations;
      const version = await users.tokenVersion(userId);
      if (version !== undefined && seen === revocations) versions.set(userId, { version, until: now() + TOKEN_VERSION_TTL_MS });
      return version;
    },

    /** Ends every login token of the user (setting a new password hash when given); returns the new version. */
    async revoke(userId: string, passwordHash?: string): Promise<number> {
      const version = await users.revokeTokens(userId, passwordHash);
      forget(userId);
      await redis.publish(keys.tokenRevocations, userId).catch((error: unknown) => {
        log.warn({ err: error }, `token revocation not published; other API instances may accept older tokens for up to ${TOKEN_VERSION_TTL_MS / 1000} s`);
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
export type TokenVersions = ReturnType<typeof tokenVersions>;
