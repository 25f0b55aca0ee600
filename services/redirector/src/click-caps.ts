import type { RedisKeys } from '@deeplink/core';
import type { CachedLink, RedisClient } from '@deeplink/core/redis';

/**
 * Takes one of a capped link's clicks when it has any left (ARGV[2] = 1), or only says whether it
 * has (0: a HEAD, which is not a click). Compare and increment in one script: Redis runs it alone,
 * so however many redirectors ask at once, the count never passes the cap, and it holds exactly the
 * clicks let through (visits past the cap add nothing: a raised cap lets exactly the difference in).
 */
const TAKE_CLICK = `local taken = tonumber(redis.call('GET', KEYS[1]) or '0')
if taken >= tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '1' then redis.call('INCR', KEYS[1]) end
return 1`;

export interface ClickCapsDeps {
  keys: RedisKeys;
  /** Where counts live; a failure there rejects (the visit answers 503): a cap is never passed unseen. */
  redis: RedisClient;
}

/** A capped link's record: its key is what tells it from a link without a cap. */
export type CappedLink = CachedLink & { clickCap: number };

/** Click caps: the per-link count in Redis, asked only for links that have a cap. */
export function createClickCaps({ keys, redis }: ClickCapsDeps) {
  return {
    /** Whether the visit may go on to the link's destination; `take`: it is a click, and counts. */
    async admits(link: CappedLink, take: boolean): Promise<boolean> {
      const answer = await redis.eval(TAKE_CLICK, 1, keys.linkClickCount(link.id), link.clickCap, take ? 1 : 0);
      return answer === 1;
    },
  };
}

export type ClickCaps = ReturnType<typeof createClickCaps>;

/** Whether a link has a click cap: the one test a visit of a link without one pays. */
export const isCapped = (link: CachedLink): link is CappedLink => link.clickCap !== undefined;
