import type { Logger } from './logger.js';

/**
 * Runs `work` until it succeeds or `timeoutMs` has passed, logging each failure, then throws the
 * last error. For start-up steps that depend on a server that may still be starting (migrations
 * while PostgreSQL boots in the same `docker compose up`).
 */
export async function retryUntil<T>(
  work: () => Promise<T>,
  { what, logger, timeoutMs = 60_000, intervalMs = 1_000 }: { what: string; logger: Logger; timeoutMs?: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() + intervalMs > deadline) throw error;
      logger.warn({ err: error, attempt }, `${what} failed; retrying`);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
