import { Queue, UnrecoverableError, Worker, type Job, type JobJsonRaw } from 'bullmq';
import { CLICK_BATCH_JOB, CLICK_QUEUE, type ClickJobData, type Config, POISON_REASON, scrubClickJob } from '@deeplink/core';
import { rollupsRepository, type Sql } from '@deeplink/core/db';
import { duplicateRedis, type RedisClient } from '@deeplink/core/redis';
import { createLogger, type Logger, type RedisOutageLog } from '@deeplink/core/runtime';
import { createClickEnricher } from './click-enricher.js';
import { openGeoIp, type GeoIp } from './geoip.js';
import { Registry } from 'prom-client';
import { createWorkerMetrics } from './metrics.js';
import { assertValidSchedules, maintenanceTasks, scheduleMaintenance, type Maintenance, type MaintenanceTask } from './maintenance.js';
import { createBatchRollup, readClickBatch, type BatchOutcome } from './rollup-batch.js';
import { createRollupWriter } from './rollup-writer.js';
import { createUserAgentParser } from './user-agent.js';

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
}

export interface ClickWorker {
  worker: Worker<ClickJobData, BatchOutcome>;
  /** The queue as a producer sees it, for reports. */
  queue: Queue<ClickJobData>;
  tasks: MaintenanceTask[];
  /** Undefined when started with schedule: false. */
  maintenance?: Maintenance;
  /** Stops taking jobs, finishes the ones in flight, stops the schedules; leaves deps.redis and deps.sql open. */
  close(): Promise<void>;
}

/**
 * BullMQ's Worker, except that a job whose data is not JSON reaches the processor (as a marker)
 * instead of failing before it: BullMQ would leave such a job active until it stalls, then take it
 * again, forever. The processor fails it for good at once.
 */
class ClickBatchWorker extends Worker<ClickJobData, BatchOutcome> {
  protected override createJob(data: JobJsonRaw, jobId: string) {
    try {
      return super.createJob(data, jobId);
    } catch (error) {
      return super.createJob({ ...data, data: JSON.stringify({ unparseable: (error as Error).message }) }, jobId);
    }
  }
}

/** Builds the click-batch consumer and its maintenance schedules. */
export async function createWorker(deps: WorkerDeps): Promise<ClickWorker> {
  const { config, sql } = deps;
  if (deps.schedule !== false) assertValidSchedules(config);
  const log = deps.log ?? createLogger('worker', config.LOG_LEVEL);
  // BullMQ blocks on its connection and must never give up on a command.
  const connection = duplicateRedis(deps.redis, { maxRetriesPerRequest: null, enableAutoPipelining: false });
  deps.outage?.watch(connection, 'queue');
  const queue = new Queue<ClickJobData>(CLICK_QUEUE, { connection, prefix: config.QUEUE_PREFIX });
  const metrics = createWorkerMetrics(deps.registry ?? new Registry(), queue);
  const rollup = createBatchRollup({
    enrich: createClickEnricher({
      geoip: deps.geoip ?? (await openGeoIp(config.GEOIP_DB)),
      parseUserAgent: createUserAgentParser(),
      visitorSalt: config.VISITOR_SALT,
    }),
    writer: createRollupWriter(rollupsRepository(sql), { onTransaction: metrics.transaction }),
  });

  const processJob = async (job: Job<ClickJobData, BatchOutcome>): Promise<BatchOutcome> => {
    if (job.name !== CLICK_BATCH_JOB) throw new UnrecoverableError(`${POISON_REASON} unexpected job name "${job.name}"`);
    let unread = readClickBatch(job.data);
    if (!unread) throw new UnrecoverableError(`${POISON_REASON} job data is not a click batch`);
    const started = performance.now();
    // Handed over once, then read again from the job's data (which BullMQ holds anyway) if needed,
    // so the unpacked clicks are not kept beside it while the batch waits for its transaction.
    const outcome = await rollup(() => {
      const batch = unread ?? readClickBatch(job.data)!;
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
  worker.on('failed', (job, error) => {
    const poison = error.message.startsWith(POISON_REASON);
    if (poison) {
      metrics.failed(true);
      log.error({ jobId: job?.id, err: error }, 'batch failed for good: it cannot be read (kept in the failed set, client addresses removed)');
      void job?.updateData(scrubClickJob(job.data) as ClickJobData).catch(() => {});
      return;
    }
    const attemptsLeft = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1);
    metrics.failed(false);
    log.warn(
      { jobId: job?.id, attemptsMade: job?.attemptsMade, err: error },
      attemptsLeft ? 'batch attempt failed, will retry' : 'batch failed; the retry-failed-batches task tries it again',
    );
  });
  const onError = deps.outage?.bullmqErrors('worker') ?? ((error: unknown) => log.error({ err: error }, 'worker error'));
  worker.on('error', onError);
  queue.on('error', onError);

  const tasks = maintenanceTasks({ config, sql, redis: deps.redis, queue, log, onFailedForGood: () => metrics.failed(true) });
  const maintenance =
    deps.schedule === false ? undefined : scheduleMaintenance(tasks, { redis: deps.redis, prefix: config.REDIS_PREFIX, log });

  return {
    worker,
    queue,
    tasks,
    maintenance,
    async close() {
      await worker.close();
      await maintenance?.stop();
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
