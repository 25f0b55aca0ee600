import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LiveOutcome } from './live-clicks.js';
import type { BatchOutcome } from './rollup-batch.js';

/** Waiting and active are where a backlog shows; delayed batches wait for a retry, failed ones for a person. */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** The worker's Prometheus metrics: throughput, durations, failures, and the queue as it stands. */
export function createWorkerMetrics(registry: Registry, queue: Queue) {
  const registers = [registry];
  const batches = new Counter({
    name: 'worker_batches_processed_total',
    help: 'Click batches processed: recorded, or skipped as a duplicate of a batch id recorded before.',
    labelNames: ['outcome'],
    registers,
  });
  const clicks = new Counter({
    name: 'worker_clicks_processed_total',
    help: 'Clicks of recorded batches: counted, or dropped (bots, malformed).',
    labelNames: ['result'],
    registers,
  });
  const batchDuration = new Histogram({
    name: 'worker_batch_duration_seconds',
    help: 'Time from taking a batch to its rollup commit, waiting for the shared transaction included.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const transactionDuration = new Histogram({
    name: 'worker_rollup_transaction_duration_seconds',
    help: 'Duration of one rollup transaction (the batches that arrived during the previous one, together).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const failures = new Counter({
    name: 'worker_batch_failures_total',
    help: 'Failed batch attempts; final="true" when no retry is left (the batch waits in the failed set).',
    labelNames: ['final'],
    registers,
  });
  const lostBatches = new Counter({
    name: 'worker_queue_batches_lost_total',
    help: "Click batches lost because the queue's Redis came back empty (restarted without persistence): those waiting at the last look before.",
    registers,
  });
  const liveEntries = new Counter({
    name: 'worker_live_entries_total',
    help: 'Per-user entries of the live click streams after a commit: published, failed (Redis or the owner lookup erred) or dropped (too many waiting). The rollups have the clicks either way.',
    labelNames: ['result'],
    registers,
  });
  const webhookAttempts = new Counter({
    name: 'worker_webhook_attempts_total',
    help: 'Webhook delivery attempts: succeeded (a 2xx), retried (to be tried again) or failed (out of attempts, refused address, disabled endpoint).',
    labelNames: ['result'],
    registers,
  });
  new Gauge({
    name: 'worker_queue_jobs',
    help: 'Click batches in the queue by state.',
    labelNames: ['state'],
    registers,
    async collect() {
      const counts = await queue.getJobCounts(...QUEUE_STATES);
      for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
    },
  });
  new Gauge({
    name: 'worker_queue_oldest_waiting_age_seconds',
    help: 'Age of the oldest batch waiting to be processed (0 when none waits): how far analytics lag behind.',
    registers,
    async collect() {
      const [oldest] = await queue.getJobs(['waiting'], 0, 0, true);
      this.set(oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0);
    },
  });

  return {
    /** Records a processed batch and how long it took. */
    processed(outcome: BatchOutcome, seconds: number): void {
      batches.inc({ outcome: outcome.recorded ? 'recorded' : 'duplicate' });
      if (outcome.recorded) {
        clicks.inc({ result: 'counted' }, outcome.counted);
        clicks.inc({ result: 'dropped' }, outcome.received - outcome.counted);
      }
      batchDuration.observe(seconds);
    },
    transaction: (seconds: number) => transactionDuration.observe(seconds),
    failed: (final: boolean) => failures.inc({ final: String(final) }),
    lost: (batches: number) => lostBatches.inc(batches),
    live: (result: LiveOutcome, entries: number) => liveEntries.inc({ result }, entries),
    webhook: (result: 'succeeded' | 'retried' | 'failed') => webhookAttempts.inc({ result }),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
