/** What withTimeout rejects with when the time is up. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/**
 * Settles like `work`, or rejects with a TimeoutError after `ms`. When `work` is a function it
 * gets an AbortSignal that fires at the deadline, so whatever it started (a fetch, a query, a
 * wait) can stop too instead of running on unobserved.
 */
export async function withTimeout<T>(
  work: PromiseLike<T> | ((signal: AbortSignal) => PromiseLike<T>),
  ms: number,
  what = 'operation',
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimeoutError(`${what} timed out after ${ms} ms`)), ms);
  const expired = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
  });
  try {
    return await Promise.race([typeof work === 'function' ? work(controller.signal) : work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves true when `work` succeeds within `ms`, false when it fails or takes longer. */
export const succeedsWithin = (
  work: PromiseLike<unknown> | ((signal: AbortSignal) => PromiseLike<unknown>),
  ms: number,
): Promise<boolean> =>
  withTimeout(work, ms).then(
    () => true,
    () => false,
  );
