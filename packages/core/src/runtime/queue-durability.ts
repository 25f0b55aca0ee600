import { Cluster } from 'ioredis';
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

/**
 * Checks the queue's Redis at start-up: logs a warning when it could lose click batches (a restart
 * without AOF loses every waiting batch; an eviction policy drops them under memory pressure), or
 * throws when `require` is set (REQUIRE_DURABLE_REDIS).
 */
export async function checkQueueDurability(client: RedisClient, { require, logger }: { require: boolean; logger: Logger }): Promise<void> {
  const problems = await queueDurabilityProblems(client);
  if (problems === undefined) {
    logger.info('cannot read the Redis configuration (CONFIG GET refused); make sure it runs with appendonly yes and maxmemory-policy noeviction');
    return;
  }
  if (problems.length === 0) return;
  const message = `the click queue's Redis could lose batches: ${problems.join('; ')}`;
  if (require) throw new Error(`${message} (REQUIRE_DURABLE_REDIS is set)`);
  logger.warn({ problems }, message);
}
