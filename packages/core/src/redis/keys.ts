/**
 * Every Redis key and channel name the services share, in one place. `prefix` is REDIS_PREFIX,
 * so several deployments (or test runs) can share one Redis without seeing each other's keys.
 */
export const redisKeys = (prefix: string) => ({
  /** The routing record of a link, by short code (JSON, see CachedLink), or MISSING_LINK. */
  link: (code: string) => `${prefix}link:${code}`,
  /** Pattern matching every link key, for SCAN. */
  linkPattern: `${prefix}link:*`,
  /** Pub/sub channel; each message is a short code whose routing record changed. */
  linkInvalidations: `${prefix}link-invalidations`,
  /** Fixed-window rate-limit counter. */
  rateLimit: (scope: string, subject: string, window: number) => `${prefix}ratelimit:${scope}:${subject}:${window}`,
});
export type RedisKeys = ReturnType<typeof redisKeys>;

/** Value stored under a link key for a code known not to exist (negative cache). */
export const MISSING_LINK = '-';
