import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, UnrecoverableError, Worker, type Job, type JobJsonRaw } from 'bullmq';
import {
  CLICK_BATCH_FORMATS,
  CLICK_BATCH_JOB,
  CLICK_QUEUE,
  type ClickBatch,
  type ClickBatchFormats,
  type ClickJobData,
  type Config,
  POISON_REASON,
  redisKeys,
  scrubClickJob,
} from '@deeplink/core';
import { linksRepository, rollupsRepository, type Sql, webhooksRepository } from '@deeplink/core/db';
import { configuredSecretBox, webhookEventQueue } from '@deeplink/core/webhooks';
import { duplicateRedis, type RedisClient } from '@deeplink/core/redis';
import { createLogger, type Logger, type RedisOutageLog } from '@deeplink/core/runtime';
import { createClickEnricher, createClickVisitor } from './click-enricher.js';
import { openGeoIp, type GeoIp } from './geoip.js';
import { createInstallClickOf } from './install-clicks.js';
import { createLivePublisher } from './live-clicks.js';
import { Registry } from 'prom-client';
import { createWorkerMetrics } from './metrics.js';
import { assertValidSchedules, maintenanceTasks, scheduleMaintenance, type Maintenance, type MaintenanceTask } from './maintenance.js';
import { createBatchRollup, readClickBatch, type BatchOutcome } from './rollup-batch.js';
import { createRollupWriter, rollupTimeouts } from './rollup-writer.js';
import { createUserAgentParser } from './user-agent.js';
import { watchQueueRedis } from './queue-watch.js';
import { createClickWebhooks } from './webhooks/click-webhooks.js';
import { createWebhookWorker } from './webhooks/webhook-worker.js';

export interface WorkerDeps {
  config: Config;
  sql: Sql;
  /** Used for the link cache and cron coordination; BullMQ gets its own connection copied from it. */
  redis: RedisClient;
  log?: Logger;
  /** Defaults to GEOIP_DB, else the country database that ships from npm. */
  geoip?: GeoIp;
  /** Run the cron maintenance schedules (default true). */
  schedule?: boolean;
  /** Where the worker's metrics go; a registry of its own when not given. */
  registry?: Registry;
  /** The process's Redis outage log: BullMQ's connection errors go there instead of each being logged. */
  outage?: RedisOutageLog;
  /** The click batch formats read (default: this release's); upgrade tests pass a later release's. */
  formats?: ClickBatchFormats;
}

export interface ClickWorker {
  worker: Worker<ClickJobData, BatchOutcome>;
  /** The queue as a producer sees it, for reports. */
  queue: Queue<ClickJobData>;
  tasks: MaintenanceTask[];
  /** Undefined when started with schedule: false. */
  maintenance?: Maintenance;
  /** The webhook deliveries' consumer (see webhooks/webhook-worker.ts). */
  webhookWorker: Worker;
  /** Stops taking jobs, finishes the ones in flight, stops the schedules; leaves deps.redis and deps.sql open. */
  close(): Promise<void>;
}

/** The fields of a stored job that BullMQ parses as JSON, and what each holds on a new job. */
const JSON_FIELDS = { data: '{}', opts: '{}', progress: '0' } as const;
type JsonField = keyof typeof JSON_FIELDS;

/** The value of a stored JSON field (an absent one reads as its default), or undefined when it is not JSON. */
const parsed = (field: JsonField, text: string | null | undefined): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text || JSON_FIELDS[field]) };
  } catch {
    return undefined;
  }
};

/** What the processor gets instead of the data of a job BullMQ could not build. */
interface UnreadableJob {
  unreadable: JsonField[];
}
const unreadableFields = (data: unknown): JsonField[] | undefined => (data as Partial<UnreadableJob> | null)?.unreadable;

/**
 * BullMQ's Worker, except that a job whose stored data, options or progress is not JSON reaches the
 * processor (as a marker, with default options) instead of failing before it: BullMQ would leave
 * such a job active until it stalls, then take it again, for hours. The processor fails it for
 * good at once.
 */
class ClickBatchWorker extends Worker<ClickJobData, BatchOutcome> {
  protected override createJob(raw: JobJsonRaw, jobId: string) {
    try {
      return super.createJob(raw, jobId);
    } catch {
      const unreadable = (Object.keys(JSON_FIELDS) as JsonField[]).filter((field) => !parsed(field, raw[field]));
      const marker: UnreadableJob = { unreadable };
      return super.createJob({ ...raw, ...JSON_FIELDS, data: JSON.stringify(marker) }, jobId);
    }
  }
}

/** Builds the click-batch consumer and its maintenance schedules. */
export async function createWorker(deps: WorkerDeps): Promise<ClickWorker> {
  const { config, sql } = deps;
  const formats = deps.formats ?? CLICK_BATCH_FORMATS;
  if (deps.schedule !== false) assertValidSchedules(config);
  const log = deps.log ?? createLogger('worker', config.LOG_LEVEL);
  // BullMQ blocks on its connection and must never give up on a command.
  const connection = duplicateRedis(deps.redis, { maxRetriesPerRequest: null, enableAutoPipelining: false });
  deps.outage?.watch(connection, 'queue');
  const queue = new Queue<ClickJobData>(CLICK_QUEUE, { connection, prefix: config.QUEUE_PREFIX });
  const metrics = createWorkerMetrics(deps.registry ?? new Registry(), queue);
  const webhooks = webhooksRepository(sql);
  const webhookEvents = webhookEventQueue(connection, config.QUEUE_PREFIX);
  const webhookWorker = createWebhookWorker({
    config,
    webhooks,
    events: webhookEvents,
    box: configuredSecretBox(config),
    connection,
    log,
    onDelivery: metrics.webhook,
  });
  const live = createLivePublisher({
    redis: deps.redis,
    keys: redisKeys(config.REDIS_PREFIX),
    links: linksRepository(sql),
    log,
    onOutcome: metrics.live,
    clickWebhooks: createClickWebhooks({ webhooks, events: webhookEvents }),
  });
  const rollup = createBatchRollup({
    enrich: createClickEnricher({
      geoip: deps.geoip ?? (await openGeoIp(config.GEOIP_DB)),
      parseUserAgent: createUserAgentParser(),
      visitorSalt: config.VISITOR_SALT,
    }),
    clickVisitor: createClickVisitor(config.VISITOR_SALT),
    installClickOf: createInstallClickOf(config.VISITOR_SALT),
    writer: createRollupWriter(rollupsRepository(sql, { timeouts: rollupTimeouts(config.WORKER_STALL_INTERVAL_MS) }), {
      onTransaction: metrics.transaction,
      minIntervalMs: config.WORKER_WRITE_INTERVAL_MS,
    }),
    live,
  });

  const processJob = async (job: Job<ClickJobData, BatchOutcome>): Promise<BatchOutcome> => {
    const unreadable = unreadableFields(job.data);
    if (unreadable) throw new UnrecoverableError(`${POISON_REASON} job ${unreadable.join(', ')} is not JSON`);
    if (job.name !== CLICK_BATCH_JOB) throw new UnrecoverableError(`${POISON_REASON} unexpected job name "${job.name}"`);
    const reading = readClickBatch(job.data, formats);
    if ('problem' in reading) throw new UnrecoverableError(`${POISON_REASON} ${reading.problem}`);
    let unread: ClickBatch | undefined = reading.batch;
    const started = performance.now();
    // Handed over once, then read again from the job's data (which BullMQ holds anyway) if needed,
    // so the unpacked clicks are not kept beside it while the batch waits for its transaction.
    const outcome = await rollup(() => {
      const batch = unread ?? (readClickBatch(job.data, formats) as { batch: ClickBatch }).batch;
      unread = undefined;
      return batch;
    });
    metrics.processed(outcome, (performance.now() - started) / 1000);
    log.debug({ jobId: job.id, ...outcome }, 'batch processed');
    return outcome;
  };

  const worker = new ClickBatchWorker(CLICK_QUEUE, processJob, {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    // Job data holds client addresses: a finished batch is removed at once (its id stays in
    // processed_batches). Failed batches are kept for a bounded time, for retries and inspection.
    removeOnComplete: { count: 0 },
    removeOnFail: { age: config.FAILED_BATCH_RETENTION_DAYS * 24 * 60 * 60, count: config.FAILED_BATCH_RETENTION_COUNT },
    // A lock expires two intervals after its last renewal (renewed every interval), and every
    // interval each worker takes back the batches whose lock expired: a crashed worker's batches
    // return within about three intervals. Writes are idempotent by batch id, so a batch may stall
    // any number of times without being counted twice.
    lockDuration: 2 * config.WORKER_STALL_INTERVAL_MS,
    stalledInterval: config.WORKER_STALL_INTERVAL_MS,
    maxStalledCount: 1_000,
  });
  /**
   * Replaces a poison batch's client addresses by hashes, and fields that are not JSON by a new
   * job's, so that the failed set, its reports and the retry task can still read it.
   */
  const keepForInspection = async (job: Job<ClickJobData, BatchOutcome>) => {
    const unreadable = unreadableFields(job.data);
    if (!unreadable) return job.updateData(scrubClickJob(job.data, formats) as ClickJobData);
    // The job in hand holds the marker; the batch itself may still be readable in Redis.
    const client = await worker.client;
    const key = queue.toKey(job.id!);
    const data = parsed('data', await client.hget(key, 'data'));
    const repaired = Object.fromEntries(unreadable.map((field) => [field, JSON_FIELDS[field]]));
    await client.hset(key, { ...repaired, data: JSON.stringify(scrubClickJob(data?.value, formats)) });
  };
  worker.on('failed', (job, error) => {
    const poison = error.message.startsWith(POISON_REASON);
    if (poison) {
      metrics.failed(true);
      log.error(
        { jobId: job?.id, err: error },
        'batch failed for good: it cannot be read (kept in the failed set, client addresses removed)',
      );
      if (job) void keepForInspection(job).catch(() => {});
      return;
    }
    const attemptsLeft = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1);
    metrics.failed(false);
    log.warn(
      { jobId: job?.id, attemptsMade: job?.attemptsMade, err: error },
      attemptsLeft ? 'batch attempt failed, will retry' : 'batch failed; the retry-failed-batches task tries it again',
    );
  });
  // Batches whose worker stopped renewing their locks (it died, froze, or its event loop was held
  // up) are taken back by whichever worker looks first; BullMQ says so once per batch, logged here
  // once per look.
  let stalled: string[] = [];
  worker.on('stalled', (jobId) => {
    if (stalled.push(jobId) > 1) return;
    setImmediate(() => {
      log.warn(
        { batches: stalled.length, jobIds: stalled.slice(0, 10) },
        'stalled batches taken back: their worker stopped renewing their locks',
      );
      stalled = [];
    });
  });
  const onError = deps.outage?.bullmqErrors('worker') ?? ((error: unknown) => log.error({ err: error }, 'worker error'));
  worker.on('error', onError);
  webhookWorker.on('error', onError);
  queue.on('error', onError);

  const watch = watchQueueRedis({ queue, redis: deps.redis, intervalMs: config.WORKER_STALL_INTERVAL_MS, log, onLost: metrics.lost });
  const tasks = maintenanceTasks({ config, sql, redis: deps.redis, queue, log, formats, onFailedForGood: () => metrics.failed(true) });
  const maintenance =
    deps.schedule === false ? undefined : scheduleMaintenance(tasks, { redis: deps.redis, prefix: config.REDIS_PREFIX, log });

  return {
    worker,
    webhookWorker,
    queue,
    tasks,
    maintenance,
    async close() {
      watch.stop();
      // A BullMQ worker closed while its blocking connection is still starting drops that
      // connection's first commands unanswered, which nothing awaits (an unhandled rejection).
      // Let both start first, for a second at most: Redis may be the reason for the shutdown.
      await Promise.race([
        Promise.all([worker.waitUntilReady(), webhookWorker.waitUntilReady()]),
        sleep(1_000, undefined, { ref: false }),
      ]).catch(() => {});
      await worker.close();
      await live.close();
      // After the live publisher, which queues the last click events; attempts in flight finish (WEBHOOK_TIMEOUT_MS at most).
      await webhookWorker.close();
      await webhookEvents.close();
      await maintenance?.stop();
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
