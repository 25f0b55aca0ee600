import type { RedisKeys } from '@deeplink/core';
import type { UsersRepository } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';

/** How long Redis keeps a user's token version: also how long a revocation made while Redis was unreachable can take to hold. */
const CACHE_SECONDS = 5 * 60;

/**
 * Users' current token versions, read on every request with a login token: from Redis (shared by
 * every API instance, so a revocation holds everywhere at once), else from PostgreSQL.
 */
export function tokenVersions(deps: { users: UsersRepository; redis: RedisClient; keys: RedisKeys }) {
  const { users, redis, keys } = deps;
  return {
    /** The user's version, or undefined for a user that no longer exists. */
    async current(userId: string): Promise<number | undefined> {
      const cached = await redis.get(keys.tokenVersion(userId)).catch(() => null);
      if (cached !== null) return Number(cached);
      const version = await users.tokenVersion(userId);
      if (version !== undefined) await redis.set(keys.tokenVersion(userId), String(version), 'EX', CACHE_SECONDS).catch(() => {});
      return version;
    },

    /** Ends every login token of the user (setting a new password hash when given); returns the new version. */
    async revoke(userId: string, passwordHash?: string): Promise<number> {
      const version = await users.revokeTokens(userId, passwordHash);
      // If Redis misses this write, its old value would outlive the revocation: then drop it instead.
      await redis.set(keys.tokenVersion(userId), String(version), 'EX', CACHE_SECONDS).catch(() => redis.del(keys.tokenVersion(userId)).catch(() => {}));
      return version;
    },
  };
}
export type TokenVersions = ReturnType<typeof tokenVersions>;
