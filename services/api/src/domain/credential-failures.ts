import { rateLimited, type RedisKeys } from '@deeplink/core';
import type { RedisClient } from '@deeplink/core/redis';

/**
 * Failed credentials per client address (or per any subject: the install tokens count theirs per
 * address and per app key under subjects of their own), checked before any credential is looked up: past `max`
 * failures in a window, requests from that address carrying credentials get 429 without a
 * database query (500 made-up API keys cost `max` queries, not 500). Windows are aligned to the
 * clock (`windowSeconds` long). If Redis is unreachable the guard lets requests through, as the
 * rate limits do.
 */
export function credentialFailures(redis: RedisClient, keys: RedisKeys, rule: { max: number; windowSeconds: number; what?: string }) {
  const what = rule.what ?? 'failed credentials from this address';
  const current = () => {
    const now = Date.now() / 1000;
    const window = Math.floor(now / rule.windowSeconds);
    return { now, window, resetAt: (window + 1) * rule.windowSeconds };
  };
  return {
    /** Throws the 429 when `address` has failed `max` times in this window. */
    async check(address: string): Promise<void> {
      const { now, window, resetAt } = current();
      const count = Number(await redis.get(keys.credentialFailures(address, window)).catch(() => null));
      if (count < rule.max) return;
      const retryAfter = Math.max(1, Math.ceil(resetAt - now));
      throw rateLimited(`Too many ${what}; retry in ${retryAfter}s`, retryAfter);
    },
    async record(address: string): Promise<void> {
      const key = keys.credentialFailures(address, current().window);
      await redis
        .multi()
        .incr(key)
        .expire(key, rule.windowSeconds + 1)
        .exec()
        .catch(() => {});
    },
  };
}
export type CredentialFailures = ReturnType<typeof credentialFailures>;
