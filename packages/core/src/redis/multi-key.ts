import { Cluster } from 'ioredis';
import type { RedisClient } from './client.js';

/**
 * The commands whose keys may lie in different slots, written once for a single server and for a
 * Redis Cluster. A cluster answers a multi-key command only when every key is in one slot, and
 * SCAN walks one node's keys, so there they become one command per key (auto-pipelined per node)
 * and a SCAN of every primary.
 */

/** Every key matching a SCAN pattern, a page at a time (never KEYS, which blocks Redis). */
export async function* scanKeys(redis: RedisClient, pattern: string, count = 1000): AsyncGenerator<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

/** The values of `keys`, in order (null for a missing key). */
export function getMany(redis: RedisClient, keys: string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return Promise.resolve([]);
  if (redis instanceof Cluster) return Promise.all(keys.map((key) => redis.get(key)));
  return redis.mget(keys);
}

/** Unlinks `keys`; returns how many existed. */
export async function unlinkMany(redis: RedisClient, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  if (redis instanceof Cluster) return (await Promise.all(keys.map((key) => redis.unlink(key)))).reduce((a, b) => a + b, 0);
  return redis.unlink(...keys);
}
