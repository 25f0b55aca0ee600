import { rateLimited } from '@deeplink/core';

export interface ConcurrencyLimitOptions {
  /** What is limited, as the 429's message names it: "exports", "PNG renders". */
  what: string;
  /** At most this many at once for one user. */
  perUser: number;
  /** At most this many at once in this process, whoever asks. */
  total?: number;
  /** The Retry-After of a refusal. */
  retryAfterSeconds: number;
}

/**
 * Bounds how many of one kind of costly work (an export holding a database connection, a PNG
 * render) run at once in this process, per user and in all. Past a bound the caller gets the
 * envelope's 429 with Retry-After instead of a place in a queue, so no client can make the wait
 * of others unbounded.
 */
export function concurrencyLimit({ what, perUser, total = Infinity, retryAfterSeconds }: ConcurrencyLimitOptions) {
  const running = new Map<string, number>();
  let all = 0;

  return {
    /** Takes a place for `userId`, or throws the 429; call the returned function once when the work ends. */
    acquire(userId: string): () => void {
      const mine = running.get(userId) ?? 0;
      if (mine >= perUser)
        throw rateLimited(`At most ${perUser} ${what} at once per account; try again when one has finished`, retryAfterSeconds);
      if (all >= total) throw rateLimited(`The server is busy with other ${what}; try again shortly`, retryAfterSeconds);
      running.set(userId, mine + 1);
      all++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        all--;
        const left = running.get(userId)! - 1;
        if (left === 0) running.delete(userId);
        else running.set(userId, left);
      };
    },
    /** How many run now (for tests and metrics). */
    get active() {
      return all;
    },
  };
}
export type ConcurrencyLimit = ReturnType<typeof concurrencyLimit>;
