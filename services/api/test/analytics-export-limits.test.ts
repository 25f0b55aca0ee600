import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Sql } from '@deeplink/core/db';
import { createApiHarness, type ApiHarness } from './harness.js';

// Exports against a listening API, read by real HTTP clients that stop reading: each holds its
// export open, the way a client on a slow or stalled connection does.

/** A year by the hour for every link of the account: far more than socket buffers hold. */
const HUGE_EXPORT = '/api/analytics/export?format=csv&timeBucket=hour&startDate=2025-01-01&endDate=2025-12-31';

interface Stalled {
  status: number;
  head: string;
  socket: Socket;
}

/** Sends `path` and reads only the answer's first chunk (its head), then stops reading. */
function stalledDownload(port: number, token: string, path: string): Promise<Stalled> {
  const socket = connect(port, '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('data', (chunk) => {
      socket.pause();
      const head = chunk.toString('latin1');
      resolve({ status: Number(head.split(' ')[1]), head, socket });
    });
  });
}

async function listen(api: ApiHarness): Promise<number> {
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  return (api.app.server.address() as { port: number }).port;
}

/** An account with `count` links (all zero-filled in an export). */
async function exporter(api: ApiHarness, name: string, count: number) {
  const user = await api.registerUser(name);
  const links = Array.from({ length: count }, (_, i) => ({ title: `${name} ${i}`, defaultUrl: `https://example.com/${i}` }));
  const created = await api.request({ method: 'POST', url: '/api/links/bulk', token: user.token, payload: { links } });
  expect(created.statusCode, created.body).toBe(201);
  return user;
}

/** An observer's own connection: the API's pools may be full. */
const observe = (api: ApiHarness) => createDatabase(api.env.config.DATABASE_URL, { max: 1, applicationName: 'observer' });

/** Connections of the export pool that hold a query or a cursor now. */
async function busyExportConnections(observer: Sql): Promise<number> {
  const [row] = await observer<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'deeplink-api-export' AND state <> 'idle'`;
  return row!.n;
}

/** The API's connections (any pool) that hold a query or a cursor now. */
async function busyConnections(observer: Sql): Promise<number> {
  const [row] = await observer<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`;
  return row!.n;
}

/** Waits until the database connections other than the observer's stop changing: the downloads have filled every buffer and wait. */
async function untilSettled(observer: Sql): Promise<void> {
  const snapshot = async () =>
    JSON.stringify(
      await observer`
    SELECT pid, state, query_start FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' ORDER BY pid`,
    );
  let last = await snapshot();
  for (let stable = 0, rounds = 0; stable < 3 && rounds < 60; rounds++) {
    await sleep(500);
    const now = await snapshot();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
}

type User = Awaited<ReturnType<ApiHarness['registerUser']>>;
const SMALL_EXPORT = '/api/analytics/export?format=csv&timeBucket=day&startDate=2025-01-01&endDate=2025-01-07';

describe('exports read by clients that stop reading', () => {
  let api: ApiHarness;
  let port: number;
  let first: User;
  let second: User;
  let observer: Sql;
  const stalled: Stalled[] = [];

  beforeAll(async () => {
    // The main pool has 4 connections (the test environment's), the export pool 2.
    api = await createApiHarness({ env: { DATABASE_EXPORT_POOL_MAX: '2', EXPORTS_PER_USER: '2', EXPORT_IDLE_TIMEOUT_SECONDS: '120' } });
    port = await listen(api);
    observer = observe(api);
    [first, second] = await Promise.all([exporter(api, 'First', 80), exporter(api, 'Second', 80)]);
  });
  afterAll(async () => {
    for (const download of stalled) download.socket.destroy();
    await observer?.end();
    await api?.close();
  });

  it("leave other accounts' requests and readiness answering at once", { timeout: 90_000 }, async () => {
    const other = await exporter(api, 'Other', 1);
    // Four stalled exports: as many as the main pool has connections.
    for (const user of [first, first, second, second]) stalled.push(await stalledDownload(port, user.token, HUGE_EXPORT));
    await untilSettled(observer);

    const timed = async (path: string, token?: string) => {
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(4_000),
      }).catch((error: unknown) => ({ status: String(error) }));
      return { path, status: response.status, ms: performance.now() - started };
    };
    const answers = [];
    for (const path of ['/api/links', '/api/auth/me', '/api/analytics/summary', '/api/links', '/api/auth/me'])
      answers.push(await timed(path, other.token));
    answers.push(await timed('/readyz'));
    // With every connection held by an export, these waited until one ended (here never: aborted after 4 s).
    for (const answer of answers) {
      expect(answer.status, answer.path).toBe(200);
      expect(answer.ms, answer.path).toBeLessThan(2_000);
    }

    // The first account's two exports hold the export pool; the second's were refused at once.
    expect(stalled.map((download) => download.status)).toEqual([200, 200, 429, 429]);
    expect(stalled[2]!.head).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(stalled[2]!.head).toContain('"code":"RATE_LIMITED"');
    expect(await busyExportConnections(observer)).toBe(2);
  });

  it("refuses an account's export beyond EXPORTS_PER_USER with a 429 and Retry-After, in the envelope", async () => {
    const response = await api.request({ method: 'GET', url: SMALL_EXPORT, token: first.token });
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.json()).toEqual({
      success: false,
      error: { code: 'RATE_LIMITED', message: 'At most 2 exports at once per account; try again when one has finished', details: [] },
    });
  });

  it('frees the connection and the place of an export whose client goes away', async () => {
    for (const download of stalled) download.socket.destroy();
    await expect.poll(() => busyExportConnections(observer), { timeout: 10_000 }).toBe(0);
    const response = await api.request({ method: 'GET', url: SMALL_EXPORT, token: second.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body.split('\r\n')[0]).toBe('link_id,bucket,dimension,value,clicks');
  });
});

describe('an export its client stops reading', () => {
  let api: ApiHarness;
  let port: number;
  let observer: Sql;

  beforeAll(async () => {
    api = await createApiHarness({ env: { DATABASE_EXPORT_POOL_MAX: '2', EXPORTS_PER_USER: '2', EXPORT_IDLE_TIMEOUT_SECONDS: '2' } });
    port = await listen(api);
    observer = observe(api);
  });
  afterAll(async () => {
    await observer?.end();
    await api?.close();
  });

  it('is ended after EXPORT_IDLE_TIMEOUT_SECONDS, its connection and its place freed', async () => {
    const user = await exporter(api, 'Sleeper', 80);
    const downloads = [await stalledDownload(port, user.token, HUGE_EXPORT), await stalledDownload(port, user.token, HUGE_EXPORT)];
    try {
      expect(downloads.map((download) => download.status)).toEqual([200, 200]);
      // Neither client reads again: within a few seconds both exports are ended by the server.
      await expect.poll(() => busyConnections(observer), { timeout: 15_000 }).toBe(0);
      // What the clients get when they read again is cut short: the chunked body has no last chunk.
      for (const download of downloads) {
        const tail = await new Promise<string>((resolve) => {
          let last = '';
          download.socket.on('data', (chunk: Buffer) => (last = (last + chunk.toString('latin1')).slice(-16)));
          download.socket.once('close', () => resolve(last));
          download.socket.resume();
        });
        expect(tail.endsWith('\r\n0\r\n\r\n')).toBe(false);
      }
      const again = await api.request({ method: 'GET', url: SMALL_EXPORT, token: user.token });
      expect(again.statusCode, again.body).toBe(200);
    } finally {
      for (const download of downloads) download.socket.destroy();
    }
  });
});
