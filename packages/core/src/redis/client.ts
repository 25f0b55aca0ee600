import { Redis, type RedisOptions } from 'ioredis';

/** Opens an ioredis connection. BullMQ connections need maxRetriesPerRequest: null. */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, enableAutoPipelining: true, ...options });
}
