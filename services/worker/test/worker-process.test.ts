import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { sampleValue } from '@deeplink/test-kit/metrics';
import { spawnProcess, type RunningProcess } from '@deeplink/test-kit/processes';
import { UA, click, clickProducer, createLinks, rolledUpClicks, waitForIdle, type ClickProducer } from './helpers.js';

describe('worker process', () => {
  let env: TestEnvironment;
  let producer: ClickProducer;
  let worker: RunningProcess | undefined;

  beforeAll(async () => {
    env = await createTestEnvironment();
    producer = clickProducer(env);
  });
  afterAll(async () => {
    await worker?.stop(0);
    await producer.close();
    await env.close();
  });

  it('rolls up queued batches, answers health checks, logs JSON without addresses and stops on SIGTERM', async () => {
    const [link] = await createLinks(env.sql, 1);
    const clicks = [
      click(link!, { ip: '203.0.113.77', userAgent: UA.androidChrome }),
      click(link!, { ip: '198.51.100.23', userAgent: UA.iphoneSafari }),
      click(link!, { ip: '8.8.8.8', userAgent: UA.googlebot }),
    ];
    for (let i = 0; i < 20; i++) await producer.add({ batchId: `process-${i}`, clicks });

    worker = spawnProcess('worker', { env: { ...env.env, LOG_LEVEL: 'debug', WORKER_PORT: '0' } });
    await expect.poll(() => worker!.output.some((line) => line.includes('"worker started"')), { timeout: 20_000 }).toBe(true);
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, link!)).toBe(40);

    const started = JSON.parse(worker.output.find((line) => line.includes('"worker started"'))!);
    const base = `http://127.0.0.1:${started.healthPort}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { redis: 'ok', postgres: 'ok', consuming: 'ok' } });

    const metrics = await (await fetch(`${base}/metrics`)).text();
    const types = {
      worker_batches_processed_total: 'counter',
      worker_clicks_processed_total: 'counter',
      worker_batch_duration_seconds: 'histogram',
      worker_rollup_transaction_duration_seconds: 'histogram',
      worker_batch_failures_total: 'counter',
      worker_queue_jobs: 'gauge',
      worker_queue_oldest_waiting_age_seconds: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
    };
    for (const [name, type] of Object.entries(types)) expect(metrics).toContain(`# TYPE ${name} ${type}\n`);
    expect(sampleValue(metrics, 'worker_batches_processed_total', 'outcome="recorded"')).toBe(20);
    expect(sampleValue(metrics, 'worker_clicks_processed_total', 'result="counted"')).toBe(40);
    expect(sampleValue(metrics, 'worker_clicks_processed_total', 'result="dropped"')).toBe(20);
    expect(sampleValue(metrics, 'worker_batch_duration_seconds_count')).toBe(20);
    expect(sampleValue(metrics, 'worker_queue_jobs', 'state="waiting"')).toBe(0);
    expect(sampleValue(metrics, 'worker_queue_oldest_waiting_age_seconds')).toBe(0);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.errors).toEqual([]);
    const lines = worker.output.map((line) => JSON.parse(line) as Record<string, unknown>);
    // The shared line format: level by name, ISO time, the service, the message.
    for (const line of lines) {
      expect(line).toMatchObject({ level: expect.stringMatching(/^(debug|info|warn)$/), service: 'worker', msg: expect.any(String) });
      expect(new Date(line.time as string).toISOString()).toBe(line.time);
    }
    expect(lines.filter((l) => l.msg === 'batch processed')).toHaveLength(20);
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'stopped' });
    const output = worker.output.join('\n');
    for (const secret of ['203.0.113.77', '198.51.100.23', '8.8.8.8', env.env.VISITOR_SALT!, env.env.JWT_SECRET!]) {
      expect(output).not.toContain(secret);
    }
  });
});
