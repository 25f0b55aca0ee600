import type { RedisOptions } from 'ioredis';
import { createRedis, type RedisClient } from '../redis/client.js';
import type { Logger } from './logger.js';

/**
 * How each kind of connection behaves while Redis is away. One preset per use, so every service
 * opens a given kind of connection the same way.
 */
export const REDIS_PRESETS = {
  /** Lookups, rate limits, readiness: fail fast (the caller falls back) rather than queue commands. */
  cache: { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 },
  /** Pub/sub subscriptions and maintenance: wait for Redis and go on. */
  general: {},
  /** A BullMQ producer: BullMQ needs maxRetriesPerRequest null; no offline queue, so an add fails (and is retried by the caller) instead of hanging. */
  queueProducer: { maxRetriesPerRequest: null, enableOfflineQueue: false, enableAutoPipelining: false },
  /** A BullMQ worker: blocks on its connection and must never give up on a command. */
  queueWorker: { maxRetriesPerRequest: null, enableAutoPipelining: false },
} satisfies Record<string, RedisOptions>;

export type RedisPreset = keyof typeof REDIS_PRESETS;

/** Errors that mean "Redis is not reachable", as opposed to a failed command. */
export function isConnectionError(error: unknown): boolean {
  const { code, name, message } = (error ?? {}) as { code?: string; name?: string; message?: string };
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ECONNABORTED'].includes(code)) return true;
  if (name === 'MaxRetriesPerRequestError') return true;
  return /Connection is closed|Stream isn't writeable|ClusterAllFailedError|Failed to refresh slots cache|connect ETIMEDOUT/i.test(
    message ?? '',
  );
}

/**
 * The one log policy for a Redis outage, shared by every connection of a process: one warning
 * when it starts, a summary at most every `summaryEveryMs` while it lasts, one line when every
 * connection is back. ioredis reports every reconnection attempt as an error; none of them is
 * logged on its own.
 */
export function createRedisOutageLog(logger: Logger, { summaryEveryMs = 30_000, now = Date.now } = {}) {
  const down = new Set<string>();
  let since = 0;
  let lastReport = 0;
  let errors = 0;

  const noteError = (connection: string, error: unknown): void => {
    errors++;
    const at = now();
    if (down.size === 0) {
      since = lastReport = at;
      errors = 1;
      logger.warn({ connection, err: error }, 'Redis unreachable; reconnecting');
    } else if (at - lastReport >= summaryEveryMs) {
      lastReport = at;
      logger.warn(
        { connections: [...down, ...(down.has(connection) ? [] : [connection])], downForMs: at - since, errors, err: error },
        'Redis still unreachable',
      );
    }
    down.add(connection);
  };

  const noteReady = (connection: string): void => {
    if (!down.delete(connection) || down.size > 0) return;
    logger.info({ downForMs: now() - since, errors }, 'Redis reachable again');
  };

  return {
    noteError,
    noteReady,
    /** Whether any watched connection is down now. */
    isDown: () => down.size > 0,
    /** Follows a connection's errors and reconnections. */
    watch(client: RedisClient, connection: string): RedisClient {
      client.on('error', (error: unknown) => noteError(connection, error));
      client.on('ready', () => noteReady(connection));
      return client;
    },
    /**
     * An 'error' listener for BullMQ queues and workers. Their connection errors come from
     * connections BullMQ opens itself (copies of a watched one, which reports the outage), so they
     * only add to the count; anything else is logged as an error.
     */
    bullmqErrors(component: string) {
      return (error: unknown) => {
        if (!isConnectionError(error)) logger.error({ component, err: error }, 'queue error');
        else if (down.size > 0) errors++;
        else logger.debug({ component, err: error }, 'queue connection error');
      };
    },
  };
}

export type RedisOutageLog = ReturnType<typeof createRedisOutageLog>;

/**
 * Opens a Redis connection with one of the presets, named after the service and its use (as
 * CLIENT LIST shows it), with its outages going to the process's outage log.
 */
export function connectRedis(
  url: string,
  preset: RedisPreset,
  { service, use, outage, options = {} }: { service: string; use: string; outage: RedisOutageLog; options?: RedisOptions },
): RedisClient {
  const client = createRedis(url, { ...REDIS_PRESETS[preset], connectionName: `deeplink-${service}-${use}`, ...options });
  return outage.watch(client, use);
}

/** Resolves when the connection is ready, or after `ms` (it keeps reconnecting in the background). */
export function untilReady(client: RedisClient, ms: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    client.on('ready', done);
  });
}

/** Runs `then` once the connection is ready: now if it is, else at its first 'ready'. */
export function whenReady(client: RedisClient, then: () => unknown): void {
  if (client.status === 'ready') void then();
  else client.once('ready', () => void then());
}
