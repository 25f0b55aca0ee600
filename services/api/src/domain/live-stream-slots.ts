import type { RedisKeys } from '@deeplink/core';
import type { RedisClient } from '@deeplink/core/redis';

// Each open stream is a member of the user's sorted set, scored by when it expires (Redis' clock,
// so instances with skewed clocks agree). Instances renew their streams' scores while they are
// open; a crashed instance stops renewing, and its streams' places free themselves.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Takes a place if fewer than ARGV[1] are held: {1, 0}, else {0, ms until the first held one expires}. */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2]) - now}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, 0}`;

/** Pushes the expiry of the places ARGV[2..] still held. */
const RENEW = `${NOW}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0`;

/**
 * Places for one user's open live streams across every API instance, counted in Redis. A place
 * lasts `ttlMs` unless renewed (renew it well within that).
 */
export function liveStreamSlots(redis: RedisClient, keys: RedisKeys, { perUser, ttlMs }: { perUser: number; ttlMs: number }) {
  return {
    perUser,
    /** Takes a place for stream `streamId`; when all are held, says in how many ms the first may free. */
    async acquire(userId: string, streamId: string): Promise<{ acquired: true } | { acquired: false; retryAfterMs: number }> {
      const [acquired, retryAfterMs] = (await redis.eval(ACQUIRE, 1, keys.liveStreams(userId), perUser, ttlMs, streamId)) as [
        number,
        number,
      ];
      return acquired === 1 ? { acquired: true } : { acquired: false, retryAfterMs };
    },
    /** Keeps the places of these streams of the user held for another `ttlMs`. */
    async renew(userId: string, streamIds: string[]): Promise<void> {
      if (streamIds.length > 0) await redis.eval(RENEW, 1, keys.liveStreams(userId), ttlMs, ...streamIds);
    },
    async release(userId: string, streamId: string): Promise<void> {
      await redis.zrem(keys.liveStreams(userId), streamId);
    },
  };
}
export type LiveStreamSlots = ReturnType<typeof liveStreamSlots>;
