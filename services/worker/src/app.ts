import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { RedisClient } from '@deeplink/core';
import { CLICK_BATCH_JOB, CLICK_QUEUE, duplicateRedis, type ClickJobData, type Config, type Sql } from '@deeplink/core';
import { rollupsRepository } from '@deeplink/core/db/rollups-repository';
import { createClickEnricher } from './click-enricher.js';
import { openGeoIp, type GeoIp } from './geoip.js';
import { createLogger, type Logger } from '@deeplink/core/runtime/logger';
import type { RedisOutageLog } from '@deeplink/core/runtime/redis-connections';
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
    if (job.name !== CLICK_BATCH_JOB) throw new UnrecoverableError(`unexpected job name "${job.name}"`);
    let unread = readClickBatch(job.data);
    if (!unread) throw new UnrecoverableError('job data is not a click batch');
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

  const worker = new Worker<ClickJobData, BatchOutcome>(CLICK_QUEUE, processJob, {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    // Job data holds client addresses: a finished batch is removed at once (its id stays in
    // processed_batches). Failed batches stay in the failed set until retried or removed.
    removeOnComplete: { count: 0 },
  });
  worker.on('failed', (job, error) => {
    const final = !job || job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError;
    metrics.failed(final);
    log[final ? 'error' : 'warn']({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: error }, final ? 'batch failed' : 'batch attempt failed, will retry');
  });
  const onError = deps.outage?.bullmqErrors('worker') ?? ((error: unknown) => log.error({ err: error }, 'worker error'));
  worker.on('error', onError);
  queue.on('error', onError);

  const tasks = maintenanceTasks({ config, sql, redis: deps.redis, queue, log });
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
