import { TimeoutError, withTimeout } from '../runtime/timeout.js';
import type { AnalyticsRepository } from './analytics-repository.js';

/** Node's socket errors and postgres.js' own connection errors. */
const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);

/**
 * True for an error that says the replica cannot answer right now, so the primary should: it is
 * unreachable, starting up or shutting down (SQLSTATE class 08, 57P01-57P03), or it cancelled the
 * read because replaying the primary's changes needed the rows it held (a recovery conflict,
 * 40001 on a standby). Errors in the query itself are not among them: the primary would fail too.
 */
export function isReplicaUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_ERRORS.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03', '40001'].includes(code);
}

export interface ReplicaFallbackOptions {
  /**
   * A read the replica has not answered in this long is answered by the primary instead, and the
   * replica is marked down: a replica that hangs (a frozen host, a full disk) refuses nothing, it
   * just never answers.
   */
  readTimeoutMs?: number;
  /**
   * While the replica is down, reads go to the primary; every `retryAfterMs` it is asked `probe`
   * (one at a time, with no deadline), and it is used again once a probe answers.
   */
  retryAfterMs?: number;
  /** A cheap query on the replica (`SELECT 1`); without one the replica is used again after `retryAfterMs`. */
  probe?: () => PromiseLike<unknown>;
  /** Called when reads move to the primary, with the error that made them. */
  onFallback?: (error: unknown) => void;
  /** Called when reads move back to the replica. */
  onRecovered?: () => void;
}

/**
 * The analytics queries against a read replica, each answered by the primary instead when the
 * replica cannot answer (isReplicaUnavailable) or does not answer within `readTimeoutMs`. Then
 * the replica is down: reads go straight to the primary until a probe of the replica answers. An
 * export falls back only before its first rows: once rows are on their way the download cannot
 * start over, and an error ends it as it would on the primary. `close` stops the probes.
 */
export function analyticsWithReplica(
  primary: AnalyticsRepository,
  replica: AnalyticsRepository,
  options: ReplicaFallbackOptions = {},
): AnalyticsRepository & { close(): void } {
  const readTimeoutMs = options.readTimeoutMs ?? 5000;
  const retryAfterMs = options.retryAfterMs ?? 5000;
  let down = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const recovered = () => {
    down = false;
    options.onRecovered?.();
  };
  /** Asks the replica again after the pause; a probe that fails waits another pause. */
  const scheduleProbe = () => {
    if (closed) return;
    retry = setTimeout(() => {
      if (!options.probe) return recovered();
      Promise.resolve(options.probe()).then(() => !closed && recovered(), scheduleProbe);
    }, retryAfterMs);
    retry.unref();
  };
  /** Records an error from the replica; returns true when the primary should answer instead. */
  const fellBack = (error: unknown): boolean => {
    if (!(error instanceof TimeoutError) && !isReplicaUnavailable(error)) return false;
    // A recovery conflict is one cancelled read, not an unavailable server: only the read moves.
    if ((error as { code?: string }).code !== '40001' && !down) {
      down = true;
      options.onFallback?.(error);
      scheduleProbe();
    }
    return true;
  };
  const read = async <T>(query: (repository: AnalyticsRepository) => Promise<T>): Promise<T> => {
    if (down) return query(primary);
    try {
      return await withTimeout(query(replica), readTimeoutMs, 'read on the replica');
    } catch (error) {
      if (!fellBack(error)) throw error;
      return query(primary);
    }
  };

  /** A streamed read: falls back only before its first rows, then reads on from the same cursor. */
  const stream = <T>(query: (repository: AnalyticsRepository) => AsyncIterable<T>): AsyncIterable<T> => ({
    async *[Symbol.asyncIterator]() {
      const onReplica = !down;
      let iterator = query(onReplica ? replica : primary)[Symbol.asyncIterator]();
      let first: IteratorResult<T>;
      try {
        first = onReplica ? await withTimeout(iterator.next(), readTimeoutMs, 'read on the replica') : await iterator.next();
      } catch (error) {
        if (!onReplica || !fellBack(error)) throw error;
        // A cursor on a replica that does not answer is left to end when it does.
        const abandoned = iterator;
        Promise.resolve()
          .then(() => abandoned.return?.())
          .catch(() => {});
        iterator = query(primary)[Symbol.asyncIterator]();
        first = await iterator.next();
      }
      if (first.done) return;
      yield first.value;
      // The rest from the same cursor; delegating also closes it when the reader stops early.
      yield* { [Symbol.asyncIterator]: () => iterator };
    },
  });

  return {
    linkReport: (...args) => read((repository) => repository.linkReport(...args)),
    accountSummary: (...args) => read((repository) => repository.accountSummary(...args)),
    dimensionTotals: (...args) => read((repository) => repository.dimensionTotals(...args)),
    exportRows: (...args) => stream((repository) => repository.exportRows(...args)),
    wideRows: (...args) => stream((repository) => repository.wideRows(...args)),
    close() {
      closed = true;
      clearTimeout(retry);
    },
  };
}
