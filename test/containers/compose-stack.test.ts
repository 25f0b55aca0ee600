// docker/compose.yaml and the four Dockerfiles for real: the images built and the stack started
// under podman-compose, then a link created through the API container, followed through the
// redirector container and counted by the worker container, Prometheus scraping all three, and
// every kind of restart keeping the data (the volumes, Redis's AOF, the click spool).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitUntil } from '@deeplink/test-kit/processes';
import { UA } from '@deeplink/test-kit/user-agents';
import { ensurePodman, podman, removeProject, run } from './podman.js';
import { ensureStandIns } from './stand-ins.js';

const project = `deeplink-test-${randomBytes(4).toString('hex')}`;
const SERVICES = ['redis', 'postgres', 'api', 'redirector', 'worker', 'prometheus'] as const;
type Service = (typeof SERVICES)[number];
const BUILT: Service[] = ['postgres', 'api', 'redirector', 'worker'];
const container = (service: Service) => `${project}_${service}_1`;

let env: NodeJS.ProcessEnv;
let apiUrl: string;
let redirectorUrl: string;
let prometheusUrl: string;
let token: string;
let shortUrl: string;

/** podman-compose on docker/compose.yaml as this project, with the builds' extra CA when the machine's node has one. */
function compose(args: string[]) {
  // Debian 12's podman-compose (1.0) ignores a build's `secrets`; its pass-through gives the builds the same secret.
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  const buildArgs = ca && existsSync(ca) ? ['--podman-build-args', `--secret id=ca,src=${ca}`] : [];
  return run('podman-compose', ['-p', project, '-f', 'docker/compose.yaml', ...buildArgs, ...args], {
    env,
    log: ['compose', project, ...args.filter((arg) => !arg.startsWith('-'))].join('-'),
  });
}

const ok = (url: string) =>
  fetch(url).then(
    (response) => response.ok,
    () => false,
  );

/** The container's own health check (the compose file's `healthcheck`) passes. */
async function waitUntilHealthy(service: Service): Promise<void> {
  const healthy = async () =>
    (await run('podman', ['healthcheck', 'run', container(service)], { env, log: 'health', allowFailure: true })).code === 0;
  await waitUntil(healthy, 240_000, { intervalMs: 1000, failure: `${service} was not healthy` });
}

/**
 * Starts the stack in the order of its depends_on conditions. Debian 12's podman-compose (1.0.3)
 * ignores those conditions and starts every container at once, and podman runs no health checks
 * on its own without systemd; so the test waits for each step's health checks itself.
 */
async function up(): Promise<void> {
  await compose(['up', '-d', 'redis', 'postgres']);
  await Promise.all([waitUntilHealthy('redis'), waitUntilHealthy('postgres')]);
  await compose(['up', '-d', 'api']);
  await waitUntilHealthy('api');
  await compose(['up', '-d']);
  await waitUntilReady();
}

/** Every service of the stack answers: the API and the redirector their published /readyz, the worker its health check. */
async function waitUntilReady(): Promise<void> {
  const every = (failure: string) => ({ intervalMs: 500, failure });
  await waitUntil(() => ok(`${apiUrl}/readyz`), 240_000, every('the API was not ready'));
  await waitUntil(() => ok(`${redirectorUrl}/readyz`), 120_000, every('the redirector was not ready'));
  await waitUntilHealthy('worker');
  await waitUntil(() => ok(`${prometheusUrl}/-/ready`), 60_000, every('Prometheus was not ready'));
}

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(`${apiUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  const body = (await response.json()) as { success: boolean; data: T };
  expect(body.success, `${path}: ${JSON.stringify(body)}`).toBe(true);
  return body.data;
}

const totalClicks = async () => (await api<{ summary: { totalClicks: number } }>('/api/analytics/summary')).summary.totalClicks;

/** A visit through the redirector's published port: the redirect it answers with. */
async function visit(): Promise<{ status: number; location: string | null }> {
  const response = await fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': UA.windowsChrome } });
  return { status: response.status, location: response.headers.get('location') };
}

beforeAll(async () => {
  env = ensurePodman();
  await ensureStandIns(env);
  const [apiPort, redirectorPort, prometheusPort] = [await freePort(), await freePort(), await freePort()];
  apiUrl = `http://127.0.0.1:${apiPort}`;
  redirectorUrl = `http://127.0.0.1:${redirectorPort}`;
  prometheusUrl = `http://127.0.0.1:${prometheusPort}`;
  env = {
    ...env,
    JWT_SECRET: randomBytes(32).toString('hex'),
    VISITOR_SALT: randomBytes(16).toString('hex'),
    SHORT_URL_BASE: redirectorUrl,
    API_PUBLISHED_PORT: String(apiPort),
    REDIRECTOR_PUBLISHED_PORT: String(redirectorPort),
    PROMETHEUS_PUBLISHED_PORT: String(prometheusPort),
  };
  // The four builds side by side (they wait on the registry and the mirror as much as they compute), then up.
  await Promise.all(BUILT.map((service) => compose(['build', service])));
  await up();
  // Cold (no stand-ins, no build cache) on a busy 2-core machine the builds alone took over 15 minutes.
}, 1_800_000);

afterAll(async () => {
  if (env) await removeProject(env, project);
}, 120_000);

describe('the compose stack in containers', () => {
  it('runs every service, each in its own container', async () => {
    const running = await podman(env, ['ps', '--filter', `label=io.podman.compose.project=${project}`, '--format', '{{.Names}}']);
    expect(running.split('\n').sort()).toEqual(SERVICES.map(container).sort());
  });

  it('creates a link through the API, redirects through the redirector and counts the click in the worker', async () => {
    token = (
      await api<{ token: string }>('/api/auth/register', {
        method: 'POST',
        body: { name: 'Ops', email: 'ops@example.com', password: 'ops password 1' },
      })
    ).token;
    const { link } = await api<{ link: { url: string } }>('/api/links', {
      method: 'POST',
      body: { title: 'Docs', defaultUrl: 'https://example.com/docs' },
    });
    shortUrl = link.url;
    expect(shortUrl.startsWith(`${redirectorUrl}/`)).toBe(true);
    expect(await visit()).toEqual({ status: 302, location: 'https://example.com/docs' });
    await expect.poll(totalClicks, { timeout: 60_000, interval: 500 }).toBe(1);
  }, 120_000);

  it('has Prometheus scrape the API, the redirector and the worker', async () => {
    const health = async () => {
      const body = (await (await fetch(`${prometheusUrl}/api/v1/targets`)).json()) as {
        data: { activeTargets: { labels: { job: string }; health: string }[] };
      };
      return Object.fromEntries(body.data.activeTargets.map((target) => [target.labels.job, target.health]));
    };
    // The first scrape falls somewhere in the 15 s interval of docker/prometheus.yml.
    await expect
      .poll(health, { timeout: 60_000, interval: 1000 })
      .toEqual({ 'deeplink-api': 'up', 'deeplink-redirector': 'up', 'deeplink-worker': 'up' });
  }, 120_000);

  it('keeps links, clicks and the queue across a restart of each container', async () => {
    for (const service of ['postgres', 'api', 'redirector', 'worker', 'prometheus'] as const) {
      await podman(env, ['restart', container(service)]);
      await waitUntilReady();
    }
    expect(await visit()).toEqual({ status: 302, location: 'https://example.com/docs' });
    await expect.poll(totalClicks, { timeout: 60_000, interval: 500 }).toBe(2);

    // A click waiting in the queue survives Redis killed outright: the AOF, synced every second.
    await podman(env, ['stop', container('worker')]);
    expect((await visit()).status).toBe(302);
    const waiting = async () => Number(await podman(env, ['exec', container('redis'), 'redis-cli', 'LLEN', 'bull:clicks:wait']));
    await expect.poll(waiting, { timeout: 20_000, interval: 250 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await podman(env, ['kill', container('redis')]);
    await podman(env, ['start', container('redis')]);
    await podman(env, ['start', container('worker')]);
    await waitUntilReady();
    await expect.poll(totalClicks, { timeout: 60_000, interval: 500 }).toBe(3);
  }, 600_000);

  it('replays clicks spooled while Redis was down after the stack is taken down and up again', async () => {
    await podman(env, ['stop', container('redis')]);
    for (let i = 0; i < 3; i++) expect(await visit()).toEqual({ status: 302, location: 'https://example.com/docs' });
    // The redirector's containers go; its spool stays on the click-spool volume, the rest on theirs.
    await compose(['down']);
    await up();
    await expect.poll(totalClicks, { timeout: 60_000, interval: 500 }).toBe(6);
    expect(await visit()).toEqual({ status: 302, location: 'https://example.com/docs' });
  }, 600_000);
});
