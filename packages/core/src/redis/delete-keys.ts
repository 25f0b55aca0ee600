import type { RedisClient } from './client.js';
import { scanKeys, unlinkMany } from './multi-key.js';

/** Deletes every key matching a SCAN pattern, a page at a time (on every primary of a cluster). */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  for await (const keys of scanKeys(redis, pattern)) await unlinkMany(redis, keys);
}
