import type { Queue } from 'bullmq';
import { type ClickBatchFormats, type Config, POISON_REASON, redisKeys, scrubClickJob } from '@deeplink/core';
import { rollupPartitions, rollupsRepository, type RollupsRepository, type Sql, webhooksRepository } from '@deeplink/core/db';
import { reconcileDomainCache, reconcileLinkCache, type RedisClient } from '@deeplink/core/redis';
import { domainChecks, txtLookup, type TxtLookup } from '@deeplink/core/domains';
import type { Logger } from '@deeplink/core/runtime';
import cron, { type RunCoordinator, type ScheduledTask } from 'node-cron';

const DAY_MS = 24 * 60 * 60 * 1000;

const CRON_SETTINGS = [
  'CRON_RECONCILE',
  'CRON_PRUNE_BATCHES',
  'CRON_QUEUE_REPORT',
  'CRON_PARTITIONS',
  'CRON_RETRY_FAILED',
  'CRON_DOMAIN_CHECK',
  'CRON_PRUNE_INSTALL_CLICKS',
  'CRON_PRUNE_WEBHOOK_DELIVERIES',
  'CRON_ROLL_COMBINATIONS',
] as const;

/** Throws an error naming the variable when a schedule is not a valid cron expression. */
export function assertValidSchedules(config: Config): void {
  for (const setting of CRON_SETTINGS) {
    if (!cron.validate(config[setting])) throw new Error(`${setting}: invalid cron expression "${config[setting]}"`);
  }
}

/** A scheduled maintenance job: what it is for, when it runs, and the work itself. */
export interface MaintenanceTask {
  name: string;
  /** The config variable holding the schedule. */
  setting: (typeof CRON_SETTINGS)[number];
  schedule: string;
  purpose: string;
  run(): Promise<Record<string, unknown>>;
}

export interface QueueReport {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

/** Forgets processed batch ids older than the retention; a batch is never redelivered that late. */
export async function pruneProcessedBatches(rollups: RollupsRepository, retentionDays: number, now = new Date()) {
  const removed = await rollups.pruneProcessedBatches(new Date(now.getTime() - retentionDays * DAY_MS));
  return { removed };
}

/**
 * Deletes the install clicks whose token expired (INSTALL_TOKEN_TTL_DAYS after the visit): past
 * then no app can claim them, and the fingerprint facts they hold have no use left.
 */
export async function pruneInstallClicks(rollups: RollupsRepository, now = new Date()) {
  return { removed: await rollups.pruneExpiredInstallClicks(now) };
}

/** Logs how many click batches wait, run, wait for a retry, or have failed for good. */
export async function reportQueue(queue: Queue, log: Logger): Promise<QueueReport> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
  const report: QueueReport = {
    waiting: counts.waiting ?? 0,
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
    failed: counts.failed ?? 0,
  };
  // Failed batches hold clicks that are not in the rollups yet: someone has to look at them.
  log[report.failed > 0 ? 'warn' : 'info']({ queue: queue.name, ...report }, 'click queue');
  return report;
}

/** The wait before the n-th retry of a failed batch (from 0): a minute, doubling, at most an hour. */
export const retryDelayMs = (retries: number): number => Math.min(60_000 * 2 ** retries, 3_600_000);

/**
 * Sends failed batches back to the queue, so no click waits for a person: each one after a
 * back-off (retryDelayMs) since it failed, at most `maxRetries` times. Poison batches (unreadable)
 * are left alone. A batch out of retries fails for good: its client addresses are hashed, it is
 * logged and counted, and it stays in the failed set for inspection until the retention removes it.
 */
export async function retryFailedBatches(
  deps: {
    queue: Queue;
    redis: RedisClient;
    key: (jobId: string) => string;
    maxRetries: number;
    retentionSeconds: number;
    log: Logger;
    /** The formats the worker reads, to hash the addresses of a batch of any of them. */
    formats?: ClickBatchFormats;
    onFailedForGood?: () => void;
  },
  now = Date.now(),
): Promise<{ retried: number; waiting: number; poison: number; failedForGood: number }> {
  const { queue, redis, key, maxRetries, log } = deps;
  const setRetries = (jobId: string, retries: number) => redis.set(key(jobId), String(retries), 'EX', deps.retentionSeconds);
  const result = { retried: 0, waiting: 0, poison: 0, failedForGood: 0 };
  for (const job of await queue.getFailed(0, 999)) {
    if (!job?.id) continue;
    if (job.failedReason?.startsWith(POISON_REASON)) {
      result.poison++;
      continue;
    }
    const retries = Number(await redis.get(key(job.id))) || 0;
    if (retries > maxRetries) {
      result.failedForGood++;
      continue;
    }
    if (retries === maxRetries) {
      await job.updateData(scrubClickJob(job.data, deps.formats));
      await setRetries(job.id, maxRetries + 1);
      deps.onFailedForGood?.();
      log.error(
        { jobId: job.id, retries, reason: job.failedReason },
        'batch failed for good after every retry (kept in the failed set, client addresses hashed)',
      );
      result.failedForGood++;
      continue;
    }
    if (now < (job.finishedOn ?? 0) + retryDelayMs(retries)) {
      result.waiting++;
      continue;
    }
    await setRetries(job.id, retries + 1);
    await job.retry('failed');
    result.retried++;
  }
  return result;
}

/** Describes a retention in months for a task's purpose line. */
const kept = (months: number) => (months === 0 ? 'forever' : `${months} months`);

/**
 * The partition task of the rollups: partitions for this month and the next two, and whole
 * partitions past HOURLY_RETENTION_MONTHS / DAILY_RETENTION_MONTHS dropped. `now` is the clock.
 * The days whose combination rows are not rolled yet are rolled first (roll-combination-days does
 * so every hour; this covers a worker stopped for long), so no day loses them with its hours.
 */
export async function maintainPartitions(sql: Sql, config: Config, now: () => Date = () => new Date()) {
  await rollupsRepository(sql).rollCombinationDays(now());
  return rollupPartitions(sql).maintain(now(), {
    hourlyMonths: config.HOURLY_RETENTION_MONTHS,
    dailyMonths: config.DAILY_RETENTION_MONTHS,
  });
}

/** The worker's maintenance tasks, bound to their dependencies and schedules. */
export function maintenanceTasks(deps: {
  config: Config;
  sql: Sql;
  redis: RedisClient;
  queue: Queue;
  log: Logger;
  /** The click batch formats the worker reads (default: this release's). */
  formats?: ClickBatchFormats;
  now?: () => Date;
  /** Called for each batch that runs out of retries. */
  onFailedForGood?: () => void;
  /** TXT lookups of custom domains (default: through DNS_SERVERS). */
  lookupTxt?: TxtLookup;
}): MaintenanceTask[] {
  const { config, sql, redis, queue, log } = deps;
  return [
    {
      name: 'reconcile-link-cache',
      setting: 'CRON_RECONCILE',
      schedule: config.CRON_RECONCILE,
      purpose: 'make the Redis link and domain caches match PostgreSQL (restore missing, evict expired, drop deleted)',
      run: async () => {
        const keys = redisKeys(config.REDIS_PREFIX);
        return { ...(await reconcileLinkCache(sql, redis, keys)), domains: await reconcileDomainCache(sql, redis, keys) };
      },
    },
    {
      name: 'prune-processed-batches',
      setting: 'CRON_PRUNE_BATCHES',
      schedule: config.CRON_PRUNE_BATCHES,
      purpose: `forget processed batch ids older than ${config.BATCH_RETENTION_DAYS} days`,
      run: () => pruneProcessedBatches(rollupsRepository(sql), config.BATCH_RETENTION_DAYS),
    },
    {
      name: 'prune-install-clicks',
      setting: 'CRON_PRUNE_INSTALL_CLICKS',
      schedule: config.CRON_PRUNE_INSTALL_CLICKS,
      purpose: 'delete install clicks whose token expired',
      run: () => pruneInstallClicks(rollupsRepository(sql), deps.now?.()),
    },
    {
      name: 'prune-webhook-deliveries',
      setting: 'CRON_PRUNE_WEBHOOK_DELIVERIES',
      schedule: config.CRON_PRUNE_WEBHOOK_DELIVERIES,
      purpose: `delete webhook deliveries older than ${config.WEBHOOK_DELIVERY_RETENTION_DAYS} days or past the newest ${config.WEBHOOK_DELIVERIES_PER_ENDPOINT} of their endpoint`,
      run: async () => {
        const now = deps.now?.() ?? new Date();
        const before = new Date(now.getTime() - config.WEBHOOK_DELIVERY_RETENTION_DAYS * DAY_MS);
        return { removed: await webhooksRepository(sql).pruneDeliveries(before, config.WEBHOOK_DELIVERIES_PER_ENDPOINT) };
      },
    },
    {
      name: 'report-queue',
      setting: 'CRON_QUEUE_REPORT',
      schedule: config.CRON_QUEUE_REPORT,
      purpose: 'log click queue depth and failed batches',
      run: async () => ({ ...(await reportQueue(queue, log)) }),
    },
    {
      name: 'retry-failed-batches',
      setting: 'CRON_RETRY_FAILED',
      schedule: config.CRON_RETRY_FAILED,
      purpose: `send failed click batches back to the queue with back-off, at most ${config.FAILED_BATCH_MAX_RETRIES} times`,
      run: () =>
        retryFailedBatches({
          queue,
          redis,
          key: redisKeys(config.REDIS_PREFIX).failedBatchRetries,
          maxRetries: config.FAILED_BATCH_MAX_RETRIES,
          retentionSeconds: config.FAILED_BATCH_RETENTION_DAYS * 24 * 60 * 60,
          log,
          formats: deps.formats,
          onFailedForGood: deps.onFailedForGood,
        }),
    },
    {
      name: 'recheck-domains',
      setting: 'CRON_DOMAIN_CHECK',
      schedule: config.CRON_DOMAIN_CHECK,
      purpose: `look up the TXT record of every active custom domain again; unverify those whose record lacked the token for ${config.DOMAIN_VERIFICATION_GRACE_HOURS} hours`,
      run: async () => ({
        ...(await domainChecks({
          sql,
          redis,
          keys: redisKeys(config.REDIS_PREFIX),
          lookupTxt: deps.lookupTxt ?? txtLookup(config.DNS_SERVERS),
          graceHours: config.DOMAIN_VERIFICATION_GRACE_HOURS,
          log,
        }).recheckAll()),
      }),
    },
    {
      name: 'roll-combination-days',
      setting: 'CRON_ROLL_COMBINATIONS',
      schedule: config.CRON_ROLL_COMBINATIONS,
      purpose: 'sum the hourly combination rollups of each UTC day that is over into its daily rows',
      run: async () => {
        const { days, rows } = await rollupsRepository(sql).rollCombinationDays(deps.now?.() ?? new Date());
        return { days: days.length, rows };
      },
    },
    {
      name: 'rollup-partitions',
      setting: 'CRON_PARTITIONS',
      schedule: config.CRON_PARTITIONS,
      purpose: `create the rollup partitions of the coming months; keep hourly rollups ${kept(config.HOURLY_RETENTION_MONTHS)}, daily ${kept(config.DAILY_RETENTION_MONTHS)}`,
      run: async () => ({ ...(await maintainPartitions(sql, config, deps.now)) }),
    },
  ];
}

/**
 * Lets one process run each scheduled slot when several workers share a Redis: the first to set
 * the slot's key runs it. The key is left to expire, so a process whose clock lags cannot run the
 * same slot again after the winner finishes.
 */
export function redisRunCoordinator(redis: RedisClient, prefix: string): RunCoordinator {
  return {
    shouldRun: async (key, ttlMs) => (await redis.set(`${prefix}cron:${key}`, String(process.pid), 'PX', ttlMs, 'NX')) === 'OK',
  };
}

export interface Maintenance {
  scheduled: ScheduledTask[];
  /** Stops the schedules and waits for runs already under way. */
  stop(): Promise<void>;
}

/** Schedules the tasks with node-cron (UTC); a failing run is logged and retried at the next slot. */
export function scheduleMaintenance(tasks: MaintenanceTask[], deps: { redis: RedisClient; prefix: string; log: Logger }): Maintenance {
  const { log } = deps;
  const runCoordinator = redisRunCoordinator(deps.redis, deps.prefix);
  const cronLogger = {
    info: (message: string) => log.debug({ component: 'cron' }, message),
    warn: (message: string) => log.warn({ component: 'cron' }, message),
    error: (message: string | Error, err?: Error) => log.error({ component: 'cron', err }, String(message)),
    debug: (message: string | Error) => log.debug({ component: 'cron' }, String(message)),
  };
  const running = new Set<Promise<void>>();
  const scheduled = tasks.map((task) =>
    cron.schedule(
      task.schedule,
      async () => {
        const started = Date.now();
        const run = task.run().then(
          (result) => log.info({ task: task.name, ms: Date.now() - started, ...result }, 'maintenance task finished'),
          (error: unknown) => log.error({ task: task.name, err: error }, 'maintenance task failed'),
        );
        running.add(run);
        await run.finally(() => running.delete(run));
      },
      { name: task.name, timezone: 'UTC', noOverlap: true, distributed: true, runCoordinator, logger: cronLogger },
    ),
  );
  for (const task of tasks) log.info({ task: task.name, schedule: task.schedule, purpose: task.purpose }, 'maintenance task scheduled');
  return {
    scheduled,
    async stop() {
      await Promise.all(scheduled.map((task) => task.destroy()));
      await Promise.all(running);
    },
  };
}
