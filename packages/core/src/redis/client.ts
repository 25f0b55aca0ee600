import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { parseClusterUrl } from './cluster-url.js';

/**
 * A connection to one Redis server or to a Redis Cluster (ioredis' Cluster client). The services
 * use both the same way; the few commands that differ (SCAN, multi-key reads and deletes) go
 * through the helpers in redis/multi-key.ts.
 */
export type RedisClient = Redis | Cluster;

/**
 * How a Cluster client behaves while a primary fails over: commands for its slots wait (offline
 * queue permitting) and are retried, with the slot map refreshed, instead of failing at once.
 */
const CLUSTER_DEFAULTS: ClusterOptions = {
  retryDelayOnFailover: 200,
  retryDelayOnClusterDown: 200,
  retryDelayOnTryAgain: 200,
  slotsRefreshTimeout: 2000,
  // Enough redirections to ride out a failover (cluster-node-timeout plus the election).
  maxRedirections: 64,
};

/** Splits connection options into those of the Cluster client and those of each node's connection. */
function clusterOptions(options: RedisOptions): ClusterOptions {
  const { enableOfflineQueue, enableAutoPipelining, lazyConnect, enableReadyCheck, ...perNode } = options;
  return {
    ...CLUSTER_DEFAULTS,
    ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
    ...(enableAutoPipelining !== undefined && { enableAutoPipelining }),
    ...(lazyConnect !== undefined && { lazyConnect }),
    ...(enableReadyCheck !== undefined && { enableReadyCheck }),
    redisOptions: perNode,
  };
}

/**
 * Opens an ioredis connection: to one server for a redis:// or rediss:// URL, to a Redis Cluster
 * for a redis+cluster:// URL (config.ts turns REDIS_CLUSTER_NODES into one). The options are those
 * of a single connection; on a cluster each applies where it belongs (the offline queue and
 * auto-pipelining to the whole client, the rest to every node's connection). BullMQ connections
 * need maxRetriesPerRequest: null.
 */
export function createRedis(url: string, options: RedisOptions = {}): RedisClient {
  const settings: RedisOptions = { lazyConnect: false, enableAutoPipelining: true, ...options };
  const cluster = parseClusterUrl(url);
  if (!cluster) return new Redis(url, settings);
  const { redisOptions, ...rest } = clusterOptions(settings);
  return new Cluster(cluster.nodes, {
    ...rest,
    redisOptions: { ...redisOptions, username: cluster.username, password: cluster.password },
  });
}

/** A new connection to the same server or cluster as `client`, with `options` changed. */
export function duplicateRedis(client: RedisClient, options: RedisOptions = {}): RedisClient {
  if (!(client instanceof Cluster)) return client.duplicate(options);
  const { redisOptions, ...rest } = clusterOptions(options);
  return client.duplicate([], { ...rest, redisOptions: { ...client.options.redisOptions, ...redisOptions } });
}

/**
 * For a cluster: a check that the writes this client has made to the primary of `key`'s slot have
 * reached one of its replicas (WAIT), so a failover right after cannot lose them. Redis Cluster
 * replicates asynchronously; without this, a primary killed between acknowledging a write and
 * sending it on loses that write. Resolves false when no replica confirmed within `timeoutMs`
 * (the replica is down or slow: the write stands, only the guarantee is missing) and rejects when
 * the primary cannot be asked (it is failing over: write again). On a single server it resolves
 * true at once.
 */
export function replicaConfirmation(client: RedisClient, key: string, timeoutMs = 1000): () => Promise<boolean> {
  if (!(client instanceof Cluster)) return async () => true;
  let slot: number | undefined;
  return async () => {
    slot ??= Number(await client.cluster('KEYSLOT', key));
    const [primary, ...replicas] = client.slots[slot] ?? [];
    if (primary === undefined) throw new Error(`no primary known for slot ${slot}`);
    // A slot with no replica (its replica became the primary and has none yet) has nothing to wait for.
    if (replicas.length === 0) return true;
    const node = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === primary);
    if (!node) throw new Error(`no connection to the primary ${primary}`);
    return (await node.wait(1, timeoutMs)) >= 1;
  };
}
