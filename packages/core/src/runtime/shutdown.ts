import type { Logger } from './logger.js';
import { withTimeout } from './timeout.js';

/**
 * What a service does to stop, in the order it is done. Each step is optional; each is bounded
 * by its own wait so one that hangs cannot keep the next from running.
 */
export interface ShutdownPlan {
  /** Stop taking new work: close listeners, stop consuming the queue. */
  stopAccepting?: () => PromiseLike<void> | void;
  /** Finish what was accepted: in-flight requests, buffered clicks, batches being written. */
  drain?: () => PromiseLike<void>;
  /** Close queues and workers (BullMQ waits for active jobs). */
  closeQueues?: () => PromiseLike<void>;
  /** Close Redis and PostgreSQL, last, since every earlier step may still need them. */
  closeConnections?: () => PromiseLike<void>;
}

export interface ShutdownOptions {
  logger: Logger;
  /** Longest wait for each of drain, closeQueues and closeConnections. */
  stepTimeoutMs?: number;
  /** Exits the process; tests pass their own. */
  exit?: (code: number) => void;
}

const STEPS = ['stopAccepting', 'drain', 'closeQueues', 'closeConnections'] as const;

/**
 * The one graceful shutdown of every service. `shutdown(reason)` runs the plan once, step by
 * step, then exits 0 (or `exitCode`), or 1 when a step failed or timed out. Installed for SIGTERM
 * and SIGINT by `handleSignals`: a second signal while it runs is logged and does not cut it
 * short (`npm start` and terminals send several); a third forces exit at once.
 */
export function gracefulShutdown(
  plan: ShutdownPlan,
  { logger, stepTimeoutMs = 15_000, exit = (code) => process.exit(code) }: ShutdownOptions,
) {
  let running: Promise<void> | undefined;
  let signals = 0;

  async function run(reason: string, exitCode: number): Promise<void> {
    logger.info({ reason }, 'shutting down');
    let failed = false;
    for (const step of STEPS) {
      const work = plan[step];
      if (!work) continue;
      try {
        await withTimeout(Promise.resolve(work()), stepTimeoutMs, `shutdown step ${step}`);
      } catch (error) {
        failed = true;
        logger.error({ err: error, step }, 'shutdown step failed; going on with the next');
      }
    }
    logger.info({ reason }, 'stopped');
    exit(failed ? 1 : exitCode);
  }

  const shutdown = (reason: string, exitCode = 0): Promise<void> => (running ??= run(reason, exitCode));

  /** Registers the signal handlers (SIGTERM, SIGINT). */
  const handleSignals = (): void => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        signals++;
        if (signals === 1) return void shutdown(signal);
        if (signals === 2) return logger.warn({ signal }, 'already shutting down; a third signal forces exit');
        logger.error({ signal }, 'forced exit before shutdown finished');
        exit(1);
      });
    }
  };

  const { onRejection, onException } = processErrorHandlers(logger, shutdown);
  /** Registers the last-resort error handlers (see processErrorHandlers). */
  const handleProcessErrors = (): void => {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
  };

  return { shutdown, handleSignals, handleProcessErrors };
}

/**
 * What a service does with an error nothing else caught, logged in its one log format instead of
 * a bare stack on stderr. An unhandled rejection is one failed operation (a lookup, a report, a
 * maintenance step): logged, and the process goes on, as it would had a handler caught it; a
 * worker that died of one would leave every batch it holds to wait for a restart. An uncaught
 * exception leaves the process in a state nobody knows: logged as fatal, then the graceful
 * shutdown runs (the redirector still flushes its clicks) and the process exits 1.
 */
export function processErrorHandlers(logger: Logger, shutdown: (reason: string, exitCode?: number) => Promise<void>) {
  return {
    onRejection(error: unknown): void {
      logger.error({ err: error }, 'unhandled rejection');
    },
    onException(error: unknown): void {
      logger.fatal({ err: error }, 'uncaught exception; shutting down');
      void shutdown('uncaught exception', 1);
    },
  };
}
