import { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ExportDeadlineError, exportBudget, withDeadlines } from '../src/domain/export-budget.js';

/** An endless source that records whether it was closed (as a database cursor is). */
function endless() {
  const state = { closed: false };
  async function* chunks() {
    try {
      for (;;) yield 'x'.repeat(1024);
    } finally {
      state.closed = true;
    }
  }
  return { body: Readable.from(chunks()), state };
}

/** Reads `stream` one chunk every `everyMs`; resolves with how it ended. */
function slowReader(stream: Readable, everyMs: number): Promise<unknown> {
  return new Promise((resolve) => {
    stream.pipe(new Writable({ highWaterMark: 1, write: (_chunk, _encoding, callback) => void setTimeout(callback, everyMs) }));
    stream.once('error', resolve);
    stream.once('end', () => resolve('ended'));
  });
}

describe('withDeadlines', () => {
  it('ends a download still being read when it has lasted totalMs, closing its source', async () => {
    const { body, state } = endless();
    let ends = 0;
    const started = performance.now();
    const outcome = await slowReader(
      withDeadlines(body, { idleMs: 5_000, totalMs: 500 }, () => ends++),
      20,
    );
    expect(outcome).toBeInstanceOf(ExportDeadlineError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(490);
    await expect.poll(() => state.closed).toBe(true);
    expect(ends).toBe(1);
  });

  it('ends a download nobody reads after idleMs, closing its source', async () => {
    const { body, state } = endless();
    const guarded = withDeadlines(body, { idleMs: 300, totalMs: 60_000 }, () => {});
    const error = await new Promise((resolve) => guarded.once('error', resolve));
    expect((error as Error).message).toMatch(/read nothing for 300 ms/);
    await expect.poll(() => state.closed).toBe(true);
  });

  it('leaves a download read to its end alone', async () => {
    let ends = 0;
    const guarded = withDeadlines(Readable.from(['a', 'b', 'c']), { idleMs: 200, totalMs: 400 }, () => ends++);
    expect(await slowReader(guarded, 10)).toBe('ended');
    await sleep(500);
    expect(ends).toBe(1);
  });
});

describe('exportBudget', () => {
  it('frees a place when opening the export fails', async () => {
    const budget = exportBudget({ perUser: 1, total: 1, idleMs: 1_000, totalMs: 1_000 });
    await expect(budget.open('u1', () => Promise.reject(new Error('no such link')))).rejects.toThrow('no such link');
    expect(budget.active).toBe(0);
    const file = await budget.open('u1', async () => ({ body: Readable.from(['a']) }));
    expect(budget.active).toBe(1);
    await expect(budget.open('u2', async () => ({ body: Readable.from(['b']) }))).rejects.toMatchObject({ status: 429 });
    file.body.resume();
    await expect.poll(() => budget.active).toBe(0);
  });
});
