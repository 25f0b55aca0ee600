import { describe, expect, it } from 'vitest';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { rateLimitedLog } from '../src/runtime/logger.js';
import { readinessCheck } from '../src/runtime/readiness.js';
import { createRedisOutageLog } from '../src/runtime/redis-connections.js';
import { isDatabaseUnavailable, retryUntil } from '../src/runtime/retry.js';
import { gracefulShutdown, processErrorHandlers } from '../src/runtime/shutdown.js';
import { TimeoutError, withTimeout } from '../src/runtime/timeout.js';

describe('gracefulShutdown', () => {
  it('runs the steps in order, once, ignores a second signal and forces exit on the third', async () => {
    const { log, lines } = capturingLogger();
    const done: string[] = [];
    const exits: number[] = [];
    let finishDrain!: () => void;
    const { handleSignals } = gracefulShutdown(
      {
        stopAccepting: () => void done.push('stopAccepting'),
        drain: () =>
          new Promise<void>((resolve) => {
            finishDrain = () => {
              done.push('drain');
              resolve();
            };
          }),
        closeQueues: async () => void done.push('closeQueues'),
        closeConnections: async () => void done.push('closeConnections'),
      },
      { logger: log, exit: (code) => void exits.push(code) },
    );
    const before = process.listeners('SIGTERM').length;
    handleSignals();
    const installed = process.listeners('SIGTERM').slice(before);
    try {
      process.emit('SIGTERM');
      process.emit('SIGTERM'); // a second: shutdown goes on
      await new Promise((resolve) => setImmediate(resolve));
      expect(done).toEqual(['stopAccepting']);
      expect(exits).toEqual([]);
      expect(lines.map((line) => line.msg)).toContain('already shutting down; a third signal forces exit');
      finishDrain();
      await expect.poll(() => exits).toEqual([0]);
      expect(done).toEqual(['stopAccepting', 'drain', 'closeQueues', 'closeConnections']);
      process.emit('SIGTERM'); // a third: forced
      expect(exits).toEqual([0, 1]);
    } finally {
      for (const listener of installed) process.off('SIGTERM', listener as () => void);
      for (const listener of process.listeners('SIGINT').slice(-1)) process.off('SIGINT', listener);
    }
  });

  it('logs an unhandled rejection and goes on; logs an uncaught exception as fatal and shuts down with exit code 1', async () => {
    const { log, lines } = capturingLogger();
    const shutdowns: [string, number | undefined][] = [];
    const { onRejection, onException } = processErrorHandlers(log, async (reason, exitCode) => void shutdowns.push([reason, exitCode]));
    onRejection(new Error('lookup failed'));
    expect(shutdowns).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'unhandled rejection', err: expect.objectContaining({ message: 'lookup failed' }) }),
    );
    onException(new TypeError('broken state'));
    expect(shutdowns).toEqual([['uncaught exception', 1]]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'fatal',
        msg: 'uncaught exception; shutting down',
        err: expect.objectContaining({ type: 'TypeError' }),
      }),
    );
  });

  it('goes on past a step that times out, and exits 1', async () => {
    const { log, lines } = capturingLogger();
    const exits: number[] = [];
    let closed = false;
    const { shutdown } = gracefulShutdown(
      { drain: () => new Promise<void>(() => {}), closeConnections: async () => void (closed = true) },
      { logger: log, stepTimeoutMs: 50, exit: (code) => void exits.push(code) },
    );
    await shutdown('test');
    expect(closed).toBe(true);
    expect(exits).toEqual([1]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', step: 'drain', msg: 'shutdown step failed; going on with the next' }),
    );
  });
});

describe('withTimeout', () => {
  it('settles like the work when it is in time, and aborts its signal when it is not', async () => {
    expect(await withTimeout(Promise.resolve(7), 100)).toBe(7);
    let signal: AbortSignal | undefined;
    await expect(
      withTimeout(
        (s) => {
          signal = s;
          return new Promise(() => {});
        },
        20,
        'probe',
      ),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(signal?.aborted).toBe(true);
  });
});

describe('readinessCheck', () => {
  it('reports each check, a hanging one as down', async () => {
    const check = readinessCheck({ fast: async () => 'ok', hangs: () => new Promise(() => {}), closed: () => false }, 30);
    expect(await check()).toEqual({ status: 'unavailable', checks: { fast: 'ok', hangs: 'down', closed: 'down' } });
    expect(await readinessCheck({ fast: async () => 1 })()).toEqual({ status: 'ok', checks: { fast: 'ok' } });
  });

  it('lets a policy decide the status from the checks and add a detail, the checks still reported', async () => {
    let spooled = 0;
    const check = readinessCheck({ store: () => false, accepting: () => true }, 30, {
      ready: ({ accepting }) => accepting === 'ok',
      detail: () => ({ spooling: spooled > 0, spoolBytes: spooled }),
    });
    expect(await check()).toEqual({ status: 'ok', checks: { store: 'down', accepting: 'ok' }, detail: { spooling: false, spoolBytes: 0 } });
    spooled = 120;
    expect((await check()).detail).toEqual({ spooling: true, spoolBytes: 120 });
    const strict = readinessCheck({ store: () => false, accepting: () => true }, 30, {
      ready: ({ store, accepting }) => store === 'ok' && accepting === 'ok',
    });
    expect(await strict()).toEqual({ status: 'unavailable', checks: { store: 'down', accepting: 'ok' } });
  });
});

describe('the Redis outage log', () => {
  it('warns once when an outage starts, summarises while it lasts, and says when every connection is back', () => {
    const { log, lines } = capturingLogger();
    let now = 0;
    const outage = createRedisOutageLog(log, { summaryEveryMs: 30_000, now: () => now });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 50; i++) {
      outage.noteError('cache', refused);
      outage.noteError('queue', refused);
      now += 1_000;
    }
    outage.noteReady('cache');
    expect(outage.isDown()).toBe(true);
    outage.noteReady('queue');
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ['warn', 'Redis unreachable; reconnecting'],
      ['warn', 'Redis still unreachable'],
      ['info', 'Redis reachable again'],
    ]);
    expect(lines[2]).toMatchObject({ downForMs: 50_000, errors: 100 });
  });
});

describe('rateLimitedLog', () => {
  it('writes once per interval and reports what it swallowed', () => {
    const { log, lines } = capturingLogger();
    let now = 0;
    const warn = rateLimitedLog(log, 'warn', 10_000, () => now);
    for (let i = 0; i < 5; i++) warn({ i }, 'repeated');
    now = 10_000;
    warn({ i: 5 }, 'repeated');
    expect(lines.map(({ i, suppressed }) => ({ i, suppressed }))).toEqual([
      { i: 0, suppressed: undefined },
      { i: 5, suppressed: 4 },
    ]);
  });
});

describe('retryUntil', () => {
  it('retries while the database is unreachable, and throws any other error at once', async () => {
    const { log, lines } = capturingLogger();
    let calls = 0;
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const result = await retryUntil(async () => (++calls < 3 ? Promise.reject(refused) : 'migrated'), {
      what: 'migrating',
      logger: log,
      retryIf: isDatabaseUnavailable,
      intervalMs: 5,
    });
    expect([result, calls, lines.length]).toEqual(['migrated', 3, 2]);

    calls = 0;
    const missing = new Error('no migrations found');
    await expect(
      retryUntil(
        async () => {
          calls++;
          throw missing;
        },
        { what: 'migrating', logger: log, retryIf: isDatabaseUnavailable, intervalMs: 5 },
      ),
    ).rejects.toBe(missing);
    expect(calls).toBe(1);
  });
});
