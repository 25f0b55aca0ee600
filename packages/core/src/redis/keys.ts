/**
 * Every Redis key and channel name the services share, in one place. `prefix` is REDIS_PREFIX,
 * so several deployments (or test runs) can share one Redis without seeing each other's keys.
 *
 * On a Redis Cluster a key's slot is the hash of its `{…}` hash tag when it has one, else of the
 * whole key. Each key here is used alone (no command or transaction needs two of them), so none
 * carries a tag and they spread over every slot: link keys by code, rate-limit keys by subject.
 * That is why REDIS_PREFIX may not hold a tag on a cluster (config.ts refuses it): it would put
 * every key in one slot. A link's invalidation is published in the transaction that writes its
 * key; PUBLISH names a channel, not a key, so the transaction stays in the key's slot and the
 * message reaches subscribers on every node. BullMQ's keys are the opposite: a queue's keys are
 * used together in its scripts and must share a slot, so its prefix carries a tag (queuePrefix).
 */
export const redisKeys = (prefix: string) => ({
  /** The routing record of a link, by cache id (see linkCacheId; JSON, see CachedLink), or MISSING_LINK. */
  link: (id: string) => `${prefix}link:${id}`,
  /** Pattern matching every link key, for SCAN. */
  linkPattern: `${prefix}link:*`,
  /** Pub/sub channel; each message is the cache id of a link whose routing record changed. */
  linkInvalidations: `${prefix}link-invalidations`,
  /** What the redirector needs of an active custom domain, by hostname (JSON, see CachedDomain), or MISSING_LINK. */
  domain: (hostname: string) => `${prefix}domain:${hostname}`,
  /** Pattern matching every domain key, for SCAN. */
  domainPattern: `${prefix}domain:*`,
  /** Pub/sub channel; each message is a hostname whose domain record changed. */
  domainInvalidations: `${prefix}domain-invalidations`,
  /** Where the API's rate-limit counters live (@fastify/rate-limit's namespace; each key is `scope:subject`). */
  rateLimit: `${prefix}ratelimit:`,
  /** Pub/sub channel; each message is the id of a user whose login tokens were revoked (see the API's token-versions.ts). */
  tokenRevocations: `${prefix}token-revocations`,
  /** Clicks a capped link has taken (by link id): kept apart from the link's record, so no rewrite of it resets the count. */
  linkClickCount: (linkId: string) => `${prefix}clickcount:${linkId}`,
  /** Password attempts at one link from one address in one minute (see the redirector's link-passwords.ts). */
  linkPasswordAttempts: (linkId: string, address: string, window: number) => `${prefix}linkpass:${linkId}:${address}:${window}`,
  /** Failed credentials from one address in one rate-limit window. */
  credentialFailures: (address: string, window: number) => `${prefix}authfail:${address}:${window}`,
  /** How many times the maintenance task retried a failed click batch (expires with the failed-batch retention). */
  failedBatchRetries: (jobId: string) => `${prefix}failed-batch-retries:${jobId}`,
  /** A user's recent live click messages (a capped stream, see live-clicks.ts), for streams that resume. */
  liveClicks: (userId: string) => `${prefix}live:${userId}`,
  /** Pub/sub channel; each message announces an entry just added to the user's liveClicks stream. */
  liveAnnouncements: (userId: string) => `${prefix}live-announce:${userId}`,
  /** The user's open live streams on every API instance (a sorted set of stream ids, scored by expiry). */
  liveStreams: (userId: string) => `${prefix}live-streams:${userId}`,
});
export type RedisKeys = ReturnType<typeof redisKeys>;

/**
 * The hash tag of a key or prefix, as Redis Cluster reads it: what lies between the first `{` and
 * the first `}` after it, when that is not empty.
 */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * The BullMQ key prefix (QUEUE_PREFIX). On a cluster every key of a queue must share a slot, so a
 * prefix without a hash tag is wrapped in one (`bull` becomes `{bull}`); every service derives the
 * same prefix from the same setting. On a single server the prefix is used as given.
 */
export const queuePrefix = (prefix: string, cluster: boolean): string =>
  cluster && hashTagOf(prefix) === undefined ? `{${prefix}}` : prefix;

/** Value stored under a link key for a code known not to exist (negative cache). */
export const MISSING_LINK = '-';
