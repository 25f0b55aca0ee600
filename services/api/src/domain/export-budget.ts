import { Transform, pipeline, type Readable } from 'node:stream';
import { concurrencyLimit } from './concurrency-limit.js';

export interface ExportBudgetOptions {
  /** Exports one account may have open at once in this process. */
  perUser: number;
  /** Exports open at once in this process: the export pool's connections, so none waits for one. */
  total: number;
  /** An export whose client takes nothing for this long is ended. */
  idleMs: number;
  /** No export lasts longer than this, however fast it is read. */
  totalMs: number;
}

/** Why an export was cut short (logged by Fastify; the client sees the connection end before the file does). */
export class ExportDeadlineError extends Error {
  override name = 'ExportDeadlineError';
}

/**
 * `body` as the client should get it: ended with an ExportDeadlineError when the client has taken
 * nothing for `idleMs` or the download has lasted `totalMs`. Ending it closes the source (and the
 * cursor holding a database connection) at once. `onEnd` runs once, however the download ends.
 */
export function withDeadlines(
  body: Readable,
  { idleMs, totalMs }: Pick<ExportBudgetOptions, 'idleMs' | 'totalMs'>,
  onEnd: () => void,
): Readable {
  const cut = (message: string) => () => guarded.destroy(new ExportDeadlineError(message));
  // A chunk passes only when the client has made room for it, so each one proves the client reads.
  const guarded = new Transform({
    transform(chunk, _encoding, callback) {
      idle.refresh();
      callback(null, chunk);
    },
  });
  const idle = setTimeout(cut(`export ended: the client read nothing for ${idleMs} ms`), idleMs);
  const whole = setTimeout(cut(`export ended: it lasted longer than ${totalMs} ms`), totalMs);
  pipeline(body, guarded, () => {
    clearTimeout(idle);
    clearTimeout(whole);
  });
  guarded.once('close', onEnd);
  return guarded;
}

/**
 * The limits every export runs under, so exports cannot take the connections the rest of the API
 * needs: a number open at once per account and in all (past either, a 429 with Retry-After), and
 * deadlines that end a download its client has stopped reading or that lasts too long.
 */
export function exportBudget(options: ExportBudgetOptions) {
  const limit = concurrencyLimit({ what: 'exports', perUser: options.perUser, total: options.total, retryAfterSeconds: 5 });
  return {
    /** Opens an export for `userId` under the limits; its place is freed when the body ends, or when opening fails. */
    async open<T extends { body: Readable }>(userId: string, start: () => Promise<T>): Promise<T> {
      const release = limit.acquire(userId);
      try {
        const file = await start();
        return { ...file, body: withDeadlines(file.body, options, release) };
      } catch (error) {
        release();
        throw error;
      }
    },
    /** Exports open now. */
    get active() {
      return limit.active;
    },
  };
}
export type ExportBudget = ReturnType<typeof exportBudget>;
