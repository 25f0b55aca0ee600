import type { AnalyticsRepository } from './analytics-repository.js';

/** Node's socket errors and postgres.js' own connection errors. */
const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
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
  /** After a read found the replica unavailable, reads go to the primary this long before the replica is tried again. */
  retryAfterMs?: number;
  /** Called when reads move to the primary, with the error that made them. */
  onFallback?: (error: unknown) => void;
  now?: () => number;
}

/**
 * The analytics queries against a read replica, each answered by the primary instead when the
 * replica cannot answer (isReplicaUnavailable). An export falls back only before its first rows:
 * once rows are on their way the download cannot start over, and an error ends it as it would on
 * the primary.
 */
export function analyticsWithReplica(
  primary: AnalyticsRepository,
  replica: AnalyticsRepository,
  options: ReplicaFallbackOptions = {},
): AnalyticsRepository {
  const retryAfterMs = options.retryAfterMs ?? 5000;
  const now = options.now ?? Date.now;
  let downUntil = 0;

  /** Which repository to read from now. */
  const source = () => (now() < downUntil ? primary : replica);
  /** Records an error from the replica; returns true when the primary should answer instead. */
  const fellBack = (error: unknown): boolean => {
    if (!isReplicaUnavailable(error)) return false;
    // A recovery conflict is one cancelled read, not an unavailable server: only the read moves.
    if ((error as { code?: string }).code !== '40001') {
      if (now() >= downUntil) options.onFallback?.(error);
      downUntil = now() + retryAfterMs;
    }
    return true;
  };
  const read = async <T>(query: (repository: AnalyticsRepository) => Promise<T>): Promise<T> => {
    const from = source();
    if (from === primary) return query(primary);
    try {
      return await query(replica);
    } catch (error) {
      if (!fellBack(error)) throw error;
      return query(primary);
    }
  };

  /** A streamed read: falls back only before its first rows, then reads on from the same cursor. */
  const stream = <T>(query: (repository: AnalyticsRepository) => AsyncIterable<T>): AsyncIterable<T> => ({
    async *[Symbol.asyncIterator]() {
      const from = source();
      let iterator = query(from)[Symbol.asyncIterator]();
      let first: IteratorResult<T>;
      try {
        first = await iterator.next();
      } catch (error) {
        if (from === primary || !fellBack(error)) throw error;
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
  };
}
