// A real Prometheus (Debian's package) scraping the three services: the series an operator's
// dashboard and alerts read come back through Prometheus's own HTTP API after real traffic.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTool } from '../../scripts/services.mjs';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, waitUntil } from '@deeplink/test-kit/processes';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const alertsFile = join(import.meta.dirname, '../../docker/alerts.yml');

let env: TestEnvironment;
let stack: Stack;
let prometheus: ChildProcess;
let prometheusUrl: string;
let dataDir: string;

beforeAll(async () => {
  ensureTool('prometheus');
  ensureTool('promtool', 'prometheus');
  env = await createTestEnvironment({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  dataDir = mkdtempSync(join(tmpdir(), 'deeplink-prometheus-'));
  const target = (job: string, url: string) => `  - job_name: deeplink-${job}\n    static_configs: [{ targets: ["${new URL(url).host}"] }]`;
  writeFileSync(
    join(dataDir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `rule_files: ["${alertsFile}"]`,
      'scrape_configs:',
      target('api', stack.ops.api),
      target('redirector', stack.ops.redirector),
      target('worker', stack.ops.worker),
    ].join('\n'),
  );
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dataDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dataDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
  await waitUntil(
    () =>
      fetch(`${prometheusUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      ),
    30_000,
  );
}, 120_000);

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  await stack?.stop();
  await env?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The samples of an instant query. */
async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as {
    status: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  expect(body.status).toBe('success');
  return body.data.result;
}
const queryValue = async (expr: string) => Number((await query(expr))[0]?.value[1] ?? NaN);

describe('Prometheus', () => {
  it('accepts the alert rules (promtool) and loads them', async () => {
    const check = spawnSync('promtool', ['check', 'rules', alertsFile], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const rules = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string }[] }[] } };
    const names = rules.data.groups.flatMap((group) => group.rules.map((rule) => rule.name));
    expect(names).toEqual(
      expect.arrayContaining([
        'DeeplinkClickLag',
        'DeeplinkFailedBatches',
        'DeeplinkRedirectorDroppingClicks',
        'DeeplinkClickSpoolWriteFailing',
        'DeeplinkServiceNotReady',
        'DeeplinkQueueBatchesLost',
      ]),
    );
  });

  it('reads redirects, clicks, API requests, queue depth and readiness of all three services', async () => {
    const register = await fetch(`${stack.apiUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ops', email: 'ops@example.com', password: 'ops password 1' }),
    });
    const { token } = ((await register.json()) as { data: { token: string } }).data;
    const created = await fetch(`${stack.apiUrl}/api/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ title: 'Watched', defaultUrl: 'https://example.com/watched' }),
    });
    const { url } = ((await created.json()) as { data: { link: { url: string } } }).data.link;
    // Every target scraped before the traffic, so the counters' rise falls inside Prometheus's samples.
    await expect.poll(() => queryValue('count(up{job=~"deeplink-.*"} == 1)'), { timeout: 30_000 }).toBe(3);

    // Traffic over a few scrapes, so rate() has two samples with a difference.
    const deadline = Date.now() + 6_000;
    while (Date.now() < deadline) {
      await Promise.all(Array.from({ length: 20 }, () => fetch(url, { redirect: 'manual', headers: { 'user-agent': UA.windowsChrome } })));
      await fetch(`${stack.apiUrl}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    await expect.poll(() => queryValue('count(up{job=~"deeplink-.*"} == 1)'), { timeout: 20_000 }).toBe(3);
    // increase() over a window that surely holds the traffic, however long the machine took to get here.
    await expect
      .poll(() => queryValue('sum(increase(redirector_responses_total{status="302"}[5m]))'), { timeout: 20_000 })
      .toBeGreaterThan(0);
    await expect
      .poll(() => queryValue('sum(increase(worker_clicks_processed_total{result="counted"}[5m]))'), { timeout: 20_000 })
      .toBeGreaterThan(0);
    await expect
      .poll(() => queryValue('sum(api_http_requests_total{route="/api/auth/me",status="200"})'), { timeout: 20_000 })
      .toBeGreaterThan(0);
    expect(await query('worker_queue_jobs')).toHaveLength(4);
    expect(await queryValue('max(worker_queue_oldest_waiting_age_seconds)')).toBeGreaterThanOrEqual(0);
    await expect.poll(() => queryValue('count(deeplink_ready == 1)'), { timeout: 20_000 }).toBe(3);
    expect((await query('deeplink_dependency_up{dependency="postgres"} == 1')).map((s) => s.metric.service).sort()).toEqual([
      'api',
      'redirector',
      'worker',
    ]);
    // The API's latency histogram gives the dashboard its p99 (a number, not NaN, once two scrapes saw requests).
    await expect
      .poll(() => queryValue('histogram_quantile(0.99, sum by (le) (increase(api_http_request_duration_seconds_bucket[1m])))'), {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
  });
});
