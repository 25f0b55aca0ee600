import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, request } from 'node:http';
import { Queue, type Job } from 'bullmq';
import { CLICK_QUEUE, type ClickBatch, type ClickEvent, type ClickJobData, type LinkFields, readClickJob } from '@deeplink/core';
import { type LinkRecord, linksRepository, type Sql } from '@deeplink/core/db';
import { runToExit as runProgramToExit, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { sampleValue } from '@deeplink/test-kit/metrics';
import { UA } from '@deeplink/test-kit/user-agents';

/** Shared with the other suites' tests. */
export { UA };

export interface RedirectorProcess extends RunningProcess {
  url: string;
  /** The metrics listener: /metrics and the detailed /readyz. */
  metricsUrl: string;
}

const listeningLine = (output: string[]) => output.find((line) => line.includes('"msg":"listening"'));

/** Runs the redirector with `env` on a free port and waits for its "listening" line. */
export async function startRedirector(env: Record<string, string>): Promise<RedirectorProcess> {
  // Info level: the bound port is read from the "listening" line.
  const service = await startProcess('redirector', {
    env: { REDIRECTOR_PORT: '0', REDIRECTOR_METRICS_PORT: '0', ...env, LOG_LEVEL: 'info' },
    ready: (output) => listeningLine(output) !== undefined,
  });
  const { port, metricsPort } = JSON.parse(listeningLine(service.output)!) as { port: number; metricsPort: number };
  return { ...service, url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}` };
}

/**
 * Redirectors on environments of their own, each with a user to own links; `stopAll` (in afterEach)
 * stops them and drops their environments.
 */
export function redirectorsWithOwnEnvironment() {
  const started: { env: TestEnvironment; redirector: RedirectorProcess }[] = [];
  return {
    async start(overrides: Record<string, string>) {
      const env = await createTestEnvironment(overrides);
      const redirector = await startRedirector(env.env);
      started.push({ env, redirector });
      return { env, redirector, userId: await createUser(env.sql) };
    },
    async stopAll() {
      for (const { env, redirector } of started.splice(0)) {
        await redirector.stop();
        await env.close();
      }
    },
  };
}

/** Runs the redirector expecting it to exit without listening; resolves with its code and output. */
export const runToExit = (env: Record<string, string>) =>
  // Info level: the test reads why it stopped.
  runProgramToExit('redirector', { env: { REDIRECTOR_PORT: '0', ...env, LOG_LEVEL: 'info' } });

/** A user to own test links. */
export async function createUser(sql: Sql): Promise<string> {
  const id = randomBytes(4).toString('hex');
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO users (name, email, password_hash) VALUES ('Test', ${`user-${id}@example.com`}, 'x') RETURNING id`;
  return row!.id;
}

let codes = 0;
/** A fresh short code, unique within the test run. */
export const newCode = (): string => `c${process.pid}x${++codes}${randomBytes(2).toString('hex')}`;

/** Inserts a link row (the API's job in production). */
export function createLink(sql: Sql, userId: string, fields: Partial<LinkFields> = {}, code = newCode()): Promise<LinkRecord> {
  return linksRepository(sql).create(userId, code, { title: 'Test link', defaultUrl: 'https://example.com/default', ...fields });
}

/** GET (or another method) without following redirects. */
export function visit(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  return fetch(url, { method, headers, redirect: 'manual' });
}

/** A GET that names `host` in the Host header (fetch cannot set it), without following redirects. */
export function visitAs(
  url: string,
  host: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; body: string; location: string | undefined; headers: IncomingHttpHeaders }> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: `${pathname}${search}`, method, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body, location: res.headers.location, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One sample of a Prometheus metric on a metrics listener, e.g. metric(url, 'redirector_link_cache_hits_total', 'layer="db"'). */
export async function metric(metricsUrl: string, name: string, labels = ''): Promise<number> {
  const value = sampleValue(await (await fetch(`${metricsUrl}/metrics`)).text(), name, labels);
  if (value === undefined) throw new Error(`metric ${name}{${labels}} not found`);
  return value;
}

/** The click queue of a test's QUEUE_PREFIX, read with BullMQ itself (close it when done). */
export function clickQueue(redisUrl: string, prefix: string): Queue<ClickJobData> {
  return new Queue<ClickJobData>(CLICK_QUEUE, { connection: { url: redisUrl, maxRetriesPerRequest: null }, prefix });
}

/** Every batch job in the queue, with its packed clicks read back into objects. */
export async function queuedBatches(queue: Queue<ClickJobData>): Promise<{ job: Job<ClickJobData>; batch: ClickBatch }[]> {
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'], 0, -1, true);
  return jobs.map((job) => {
    const batch = readClickJob(job.data);
    if (!batch) throw new Error(`job ${job.id} does not hold a click batch`);
    return { job, batch };
  });
}

/** Every click of every batch waiting in the queue. */
export async function queuedClicks(queue: Queue<ClickJobData>): Promise<ClickEvent[]> {
  return (await queuedBatches(queue)).flatMap(({ batch }) => batch.clicks);
}
