// `npm run build` bundles each service into services/<name>/dist/main.js, and those bundles (what
// `npm start`, the bench and the Docker images run) work with plain node: the migrations, the
// uWebSockets.js addon, the GeoIP database and the OpenAPI UI are all found from dist/.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '@deeplink/core/db';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { logLines } from '@deeplink/test-kit/logs';
import { freePort, healthy, runToExit, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';
import { adminUrl, databaseUrl } from '@deeplink/test-kit/urls';
import { bundleFlags } from '../scripts/build.mjs';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const SERVICES = ['api', 'redirector', 'worker'] as const;
const migrations = readdirSync(join(root, 'packages/core/src/db/migrations'))
  .filter((file) => file.endsWith('.sql'))
  .sort();
const dist = (name: string, ...path: string[]) => join(root, 'services', name, 'dist', ...path);

let env: TestEnvironment;
/** An empty database, so the worker bundle has to apply every migration from its dist/migrations. */
const emptyDatabase = `deeplink_test_build_${randomBytes(5).toString('hex')}`;
const processes: RunningProcess[] = [];
let buildOutput: string;

beforeAll(async () => {
  buildOutput = (await run('npm', ['run', 'build'], { cwd: root })).stdout;
  env = await createTestEnvironment({ LOG_LEVEL: 'info' });
  const admin = createDatabase(adminUrl(), { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${emptyDatabase}`);
  } finally {
    await admin.end();
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((service) => service.stop()));
  await env?.close();
  const admin = createDatabase(adminUrl(), { max: 1 });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${emptyDatabase} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
});

async function start(name: (typeof SERVICES)[number], extra: Record<string, string>, url: string): Promise<RunningProcess> {
  const service = await startProcess(name, { env: { ...env.env, ...extra }, ready: healthy(url), from: 'bundle' });
  processes.push(service);
  return service;
}

describe('npm run build', () => {
  it('bundles each service, with the migrations beside the bundles that apply them', () => {
    expect(buildOutput).toMatch(/\[build\] api, redirector, worker bundled in \d+ ms/);
    for (const name of SERVICES) {
      const code = readFileSync(dist(name, 'main.js'), 'utf8');
      expect(code).toContain('//# sourceMappingURL=main.js.map');
      expect(existsSync(dist(name, 'main.js.map'))).toBe(true);
      expect(code, 'workspace code is bundled in').not.toMatch(/from ["']@deeplink\//);
      expect(code, 'npm packages stay imports').toMatch(/from ["']ioredis["']/);
      expect(code, 'no name-keeping helpers').not.toContain('__name(');
    }
    for (const name of ['api', 'worker']) expect(readdirSync(dist(name, 'migrations')).sort()).toEqual(migrations);
  });

  it('builds the dashboard within its size budget, with no inline script and nothing from another origin', () => {
    const line = /\[build\] dashboard .*: initial JavaScript ([\d.]+) KB gzipped/.exec(buildOutput);
    expect(line, buildOutput).not.toBeNull();
    expect(Number(line![1])).toBeLessThanOrEqual(150);
    const dashboard = join(root, 'services/dashboard/dist');
    const html = readFileSync(join(dashboard, 'index.html'), 'utf8');
    expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(html, 'every script is a file').not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html, 'no inline style').not.toMatch(/<style|\sstyle=/);
    const styles = readdirSync(join(dashboard, 'assets')).filter((file) => file.endsWith('.css'));
    expect(styles.length).toBeGreaterThan(0);
    for (const file of ['index.html', ...styles.map((css) => `assets/${css}`)]) {
      expect(readFileSync(join(dashboard, file), 'utf8'), file).not.toMatch(/(?:src|href)="https?:|url\(\s*["']?(?:https?:)?\/\//);
    }
  });

  it('the worker bundle migrates an empty database and answers /healthz', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const worker = await start('worker', { DATABASE_URL: databaseUrl(emptyDatabase), WORKER_PORT: String(port) }, url);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    // By the number each file carries: numbers taken by work merged later may be missing for a while.
    const version = (file: string) => Number.parseInt(file, 10);
    for (const file of migrations) {
      expect(worker.output.join('\n')).toContain(`applying migration ${version(file)} ${file.replace(/^\d+\.do\.|\.sql$/g, '')}`);
    }
    const sql = createDatabase(databaseUrl(emptyDatabase), { max: 1 });
    try {
      const [row] = await sql<{ version: number }[]>`SELECT max(version)::int AS version FROM schema_migrations`;
      expect(row?.version).toBe(version(migrations.at(-1)!));
    } finally {
      await sql.end();
    }
  });

  it('runs each bundle with its node flags everywhere: npm start and the bench (bundleFlags), the Dockerfiles, npm start -w', () => {
    for (const name of SERVICES) {
      const command = ['node', '--enable-source-maps', ...bundleFlags(name)];
      const dockerfile = readFileSync(join(root, 'docker', `${name}.Dockerfile`), 'utf8');
      const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
      expect(cmd, `docker/${name}.Dockerfile`).toEqual([...command, `services/${name}/dist/main.js`]);
      const manifest = JSON.parse(readFileSync(join(root, 'services', name, 'package.json'), 'utf8')) as { scripts: { start: string } };
      expect(manifest.scripts.start, `services/${name}/package.json`).toContain(`&& ${[...command, 'dist/main.js'].join(' ')}`);
    }
    expect(bundleFlags('redirector')).toContain('--max-semi-space-size=8');
  });

  it('the redirector bundle loads the native uWebSockets.js and answers /healthz', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const redirector = await start('redirector', { REDIRECTOR_PORT: String(port), SHORT_URL_BASE: url }, url);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(logLines(redirector.output)).toContainEqual(expect.objectContaining({ msg: 'listening', uws: 'native' }));
  });

  it('the API bundle serves its OpenAPI document and the reference page', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    await start('api', { API_PORT: String(port) }, url);
    const document = (await (await fetch(`${url}/api/docs/json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toContain('/api/links');
    const page = await fetch(`${url}/api/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<code>/api/links</code>');
    expect((await fetch(`${url}/api/docs/reference.css`)).headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('a bundle without its migrations refuses to start instead of running on an empty schema', async () => {
    // Inside the checkout, so the bundle's npm imports still resolve.
    const bare = mkdtempSync(join(root, 'services', 'worker', 'dist-without-migrations-'));
    try {
      copyFileSync(dist('worker', 'main.js'), join(bare, 'main.js'));
      const failure = await runToExit(
        { entry: join(bare, 'main.js') },
        {
          env: { ...env.env, DATABASE_URL: databaseUrl(emptyDatabase), WORKER_PORT: String(await freePort()) },
          timeoutMs: 20_000,
        },
      );
      expect(failure.code).not.toBe(0);
      expect(failure.output).toContain('no migrations found');
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
