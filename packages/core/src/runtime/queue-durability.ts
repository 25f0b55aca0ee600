import { Cluster } from 'ioredis';
import type { Config } from '../config.js';
import type { RedisClient } from '../redis/client.js';
import type { Logger } from './logger.js';

/** What the click queue needs of its Redis: a restart keeps the jobs, and memory pressure never evicts one. */
export const DURABLE_REDIS = { appendonly: 'yes', 'maxmemory-policy': 'noeviction' } as const;

/**
 * The settings of the queue's Redis (every primary on a cluster) that could lose jobs: an empty
 * list when it is durable, undefined when CONFIG cannot be read (managed services often disable it).
 */
export async function queueDurabilityProblems(client: RedisClient): Promise<string[] | undefined> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const problems: string[] = [];
  try {
    for (const node of nodes) {
      for (const [setting, wanted] of Object.entries(DURABLE_REDIS)) {
        const [, value] = (await node.config('GET', setting)) as [string, string];
        if (value !== wanted) problems.push(`${setting} is ${value || 'unset'} (the queue needs ${wanted})`);
      }
    }
  } catch {
    return undefined;
  }
  return [...new Set(problems)];
}

/** The settings that decide whether a service may start on a queue Redis that could lose batches. */
export type QueueDurabilitySettings = Pick<
  Config,
  'NODE_ENV' | 'REQUIRE_DURABLE_REDIS' | 'ALLOW_VOLATILE_REDIS' | 'QUEUE_DURABILITY_NOTED'
>;

/**
 * The one rule: a durable queue Redis is required in production, and anywhere with
 * REQUIRE_DURABLE_REDIS=1, unless ALLOW_VOLATILE_REDIS=1 says otherwise.
 */
export const requiresDurableRedis = (config: QueueDurabilitySettings): boolean =>
  (config.NODE_ENV === 'production' || config.REQUIRE_DURABLE_REDIS) && !config.ALLOW_VOLATILE_REDIS;

/**
 * Checks the queue's Redis at start-up (a restart without AOF loses every waiting batch; an
 * eviction policy drops them under memory pressure): throws when it could lose batches and
 * requiresDurableRedis says so, logs a warning otherwise (at debug when QUEUE_DURABILITY_NOTED: the
 * launcher said it once already). The ALLOW_VOLATILE_REDIS opt-out is logged at every start, so it
 * cannot be forgotten.
 */
export async function checkQueueDurability(
  client: RedisClient,
  { config, logger }: { config: QueueDurabilitySettings; logger: Logger },
): Promise<void> {
  const problems = await queueDurabilityProblems(client);
  if (config.ALLOW_VOLATILE_REDIS) {
    logger.warn({ problems }, "ALLOW_VOLATILE_REDIS is set: the durability of the click queue's Redis is not enforced");
  }
  if (problems === undefined) {
    // Managed services often refuse CONFIG: what cannot be read is not held against them.
    const level = requiresDurableRedis(config) ? 'warn' : config.QUEUE_DURABILITY_NOTED ? 'debug' : 'info';
    logger[level](
      'cannot read the Redis configuration (CONFIG GET refused); make sure it runs with appendonly yes and maxmemory-policy noeviction',
    );
    return;
  }
  if (problems.length === 0) return;
  const message = `the click queue's Redis could lose batches: ${problems.join('; ')}`;
  if (requiresDurableRedis(config)) {
    const why = config.NODE_ENV === 'production' ? 'NODE_ENV is production' : 'REQUIRE_DURABLE_REDIS is set';
    throw new Error(`${message} (${why}; ALLOW_VOLATILE_REDIS=1 starts anyway)`);
  }
  if (!config.ALLOW_VOLATILE_REDIS) logger[config.QUEUE_DURABILITY_NOTED ? 'debug' : 'warn']({ problems }, message);
}
