import type { Logger } from './logger.js';

/** Errors that mean PostgreSQL is not reachable yet (refused, unresolved, starting up), as opposed to a failed statement. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: string };
  return ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'CONNECT_TIMEOUT', '57P03', '08001', '08006'].includes(
    code ?? '',
  );
}

/**
 * Runs `work` until it succeeds or `timeoutMs` has passed, logging each failure that `retryIf`
 * accepts, then throws the last error; other errors are thrown at once. For start-up steps that
 * depend on a server that may still be starting (migrations while PostgreSQL boots in the same
 * `docker compose up`).
 */
export async function retryUntil<T>(
  work: () => Promise<T>,
  {
    what,
    logger,
    retryIf,
    timeoutMs = 60_000,
    intervalMs = 1_000,
  }: { what: string; logger: Logger; retryIf: (error: unknown) => boolean; timeoutMs?: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!retryIf(error) || Date.now() + intervalMs > deadline) throw error;
      logger.warn({ err: error, attempt }, `${what} failed; retrying`);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
