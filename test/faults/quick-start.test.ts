// The README's quick start as a newcomer runs it: `npm start` (scripts/start.mjs) brings the stack up
// and says where the dashboard is once the API answers; the README's first-link commands work, run
// again they log Ada in instead of failing, and with nothing answering they print a plain line, not
// a stack trace. In this project because `npm start` rebuilds the bundles every other test runs
// from: files here run one at a time.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';

const root = join(import.meta.dirname, '../..');

/** The README's first-link commands, pointed at `apiUrl` instead of localhost:3000. */
function firstLinkCommands(apiUrl: string): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /A first link, end to end[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error("README.md has no first-link commands after 'A first link, end to end'");
  return block.replaceAll('localhost:3000', apiUrl.replace('http://', ''));
}

const runCommands = (commands: string) => {
  const run = spawnSync('bash', ['-c', commands], { encoding: 'utf8', timeout: 30_000 });
  return `${run.stdout}${run.stderr}`;
};

/** A line of a Node stack trace. */
const STACK_FRAME = /^\s+at .+/m;

describe('the quick start', () => {
  let env: TestEnvironment;
  let start: RunningProcess | undefined;
  let apiUrl: string;

  beforeAll(async () => {
    env = await createTestEnvironment();
    const [api, apiMetrics, redirector, redirectorMetrics, worker] = await Promise.all(Array.from({ length: 5 }, freePort));
    apiUrl = `http://127.0.0.1:${api}`;
    start = await startProcess(
      { entry: join(root, 'scripts/start.mjs') },
      {
        env: {
          ...env.env,
          HOME: process.env.HOME,
          LOG_LEVEL: 'info',
          API_PORT: String(api),
          API_METRICS_PORT: String(apiMetrics),
          REDIRECTOR_PORT: String(redirector),
          REDIRECTOR_METRICS_PORT: String(redirectorMetrics),
          WORKER_PORT: String(worker),
          SHORT_URL_BASE: `http://127.0.0.1:${redirector}`,
        },
        ready: (output) => output.some((line) => line.startsWith('[start] ready')),
        timeoutMs: 180_000,
      },
    );
  }, 240_000);

  afterAll(async () => {
    await start?.stop();
    await env?.close();
  });

  it('says where the dashboard is once the API answers, and each risk of the Redis once', () => {
    const ready = start!.output.find((line) => line.startsWith('[start] ready'));
    expect(ready).toMatch(new RegExp(`^\\[start\\] ready: open ${apiUrl}/ and sign in \\(`));
    expect(start!.output.filter((line) => /could lose (clicks|batches)/.test(line)).length).toBeLessThanOrEqual(1);
  });

  it('runs the first-link commands, and again, logging in the second time; one log line per API request', async () => {
    const commands = firstLinkCommands(apiUrl);
    for (const attempt of [1, 2]) {
      const before = start!.output.length;
      const printed = runCommands(commands);
      expect(printed, `run ${attempt}`).toMatch(/^HTTP\/1\.1 302/m);
      expect(printed).toMatch(/^location: intent:\/\//im);
      expect(printed).not.toMatch(STACK_FRAME);
      const linkRequests = () =>
        start!.output.slice(before).filter((line) => line.startsWith('[api]') && line.includes('"url":"/api/links"'));
      await expect.poll(() => linkRequests().length).toBe(1);
      expect(linkRequests()).toHaveLength(1);
    }
  });

  it('says in one line that it runs already when started a second time', () => {
    const again = spawnSync(process.execPath, [join(root, 'scripts/start.mjs')], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, API_PORT: new URL(apiUrl).port },
    });
    expect(again.status).toBe(1);
    expect(again.stderr.trim()).toBe(
      `[start] port ${new URL(apiUrl).port} (API_PORT) is in use: is npm start already running? Stop it, or set API_PORT to another port`,
    );
  });

  it('stops on Ctrl-C with every service exiting 0; the commands then print a plain line', async () => {
    start!.child.kill('SIGINT');
    expect(await start!.exited).toBe(0);
    expect(start!.output.filter((line) => /exited \(/.test(line))).toEqual([
      expect.stringMatching(/exited \(0\)$/),
      expect.stringMatching(/exited \(0\)$/),
      expect.stringMatching(/exited \(0\)$/),
    ]);
    const printed = runCommands(firstLinkCommands(apiUrl));
    expect(printed).not.toMatch(STACK_FRAME);
    expect(printed).toContain('no answer: is npm start running?');
  });
});
