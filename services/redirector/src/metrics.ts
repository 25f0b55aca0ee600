import { Counter, Gauge, type Registry } from 'prom-client';

type Layer = 'lru' | 'redis' | 'db';

/** Every status a short-link request is answered with, in the order /metrics lists them. */
const STATUSES = [200, 302, 400, 401, 404, 405, 410, 413, 429, 503] as const;
export type ResponseStatus = (typeof STATUSES)[number];

/** Counters for GET /metrics. Plain numbers: the hot path only increments fields. */
export class Metrics {
  /**
   * Answers to short-link requests, indexed by the HTTP status itself. A dense array makes the
   * per-request count one indexed store; an object keyed 200…503 keeps such keys in a dictionary.
   */
  private readonly responses: number[] = new Array<number>(STATUSES.at(-1)! + 1).fill(0);
  /** A record (or a negative-cache marker) found at this layer. */
  readonly hits: Record<Layer, number> = { lru: 0, redis: 0, db: 0 };
  /** Nothing at this layer; a db miss is an unknown code. */
  readonly misses: Record<Layer, number> = { lru: 0, redis: 0, db: 0 };
  readonly lookupErrors: Record<'redis' | 'db', number> = { redis: 0, db: 0 };
  /** Background refreshes of an LRU entry past its TTL that failed; the entry keeps answering. */
  refreshErrors = 0;
  /** Codes in no cache answered 404 without a lookup: their address spent its UNKNOWN_CODE budget. */
  lookupsThrottled = 0;
  clicksBuffered = 0;
  clicksFlushed = 0;
  clicksDropped = 0;
  /** Clicks written to the spool on disk (the queue unreachable, or at shutdown). */
  clicksSpooled = 0;
  /** Clicks sent from the spool to the queue. */
  clicksReplayed = 0;
  /** Appends the spool's disk refused (full, read-only, gone): those batches stay in memory. */
  spoolWriteFailures = 0;
  /** Spool lines a replay could not read as a click batch (torn, or of a format this release does not read), moved aside. */
  spoolLinesSetAside = 0;
  batchesFlushed = 0;
  flushErrors = 0;
  /** On Redis Cluster: batches written to the queue's primary that no replica confirmed in time. */
  unreplicatedBatches = 0;
  /** …and those of them written once more, after a failover would have ended. */
  batchesRewritten = 0;

  constructor(
    private readonly gauges: {
      bufferedClicks: () => number;
      lruSize: () => number;
      lruBytes: () => number;
      domainCacheSize: () => number;
      domainCacheBytes: () => number;
      spoolBytes: () => number;
      spooling: () => boolean;
      native: boolean;
    },
  ) {}

  response(status: ResponseStatus): void {
    this.responses[status]!++;
  }

  /**
   * Adds these counters to a prom-client registry. The hot path keeps incrementing plain fields;
   * prom-client reads them only when Prometheus scrapes (each metric's collect()).
   */
  register(registry: Registry): void {
    const counter = (name: string, help: string, labelNames: string[], read: () => [Record<string, string | number>, number][]) =>
      new Counter({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset();
          for (const [labels, value] of read()) this.inc(labels, value);
        },
      });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    const one = (value: () => number) => (): [Record<string, string>, number][] => [[{}, value()]];
    const byLayer = (values: Record<string, number>) => (): [Record<string, string>, number][] =>
      Object.entries(values).map(([layer, n]) => [{ layer }, n]);

    // Every status from the start, zeros included, so rate() sees a series' first answers too.
    counter('redirector_responses_total', 'Short-link answers by HTTP status.', ['status'], () =>
      STATUSES.map((status) => [{ status }, this.responses[status]!]),
    );
    counter(
      'redirector_link_cache_hits_total',
      'Link lookups answered by a layer (including negative entries).',
      ['layer'],
      byLayer(this.hits),
    );
    counter(
      'redirector_link_cache_misses_total',
      'Link lookups a layer could not answer; db misses are unknown codes.',
      ['layer'],
      byLayer(this.misses),
    );
    counter('redirector_link_lookup_errors_total', 'Lookups that failed at a layer.', ['layer'], byLayer(this.lookupErrors));
    counter(
      'redirector_link_refresh_errors_total',
      'Background refreshes of an LRU entry past its TTL that failed; the entry keeps answering.',
      [],
      one(() => this.refreshErrors),
    );
    gauge('redirector_link_cache_entries', 'Entries in the in-process link cache.', () => this.gauges.lruSize());
    gauge('redirector_link_cache_bytes', 'Bytes of records and prepared answers in the in-process link cache.', () =>
      this.gauges.lruBytes(),
    );
    gauge('redirector_domain_cache_entries', 'Hostnames, known or unknown, in the in-process domain cache.', () =>
      this.gauges.domainCacheSize(),
    );
    gauge('redirector_domain_cache_bytes', 'Bytes of hostnames and prepared answers in the in-process domain cache.', () =>
      this.gauges.domainCacheBytes(),
    );
    counter(
      'redirector_lookups_throttled_total',
      'Codes in no cache answered 404 without a lookup: the address spent its budget for unknown codes.',
      [],
      one(() => this.lookupsThrottled),
    );
    counter(
      'redirector_clicks_buffered_total',
      'Clicks accepted into the in-memory buffer.',
      [],
      one(() => this.clicksBuffered),
    );
    counter(
      'redirector_clicks_flushed_total',
      'Clicks written to the queue.',
      [],
      one(() => this.clicksFlushed),
    );
    counter(
      'redirector_clicks_dropped_total',
      'Clicks dropped: memory held CLICK_BUFFER_MAX and the spool took no more.',
      [],
      one(() => this.clicksDropped),
    );
    counter(
      'redirector_clicks_spooled_total',
      'Clicks written to the spool on disk while the queue was unreachable, or at shutdown.',
      [],
      one(() => this.clicksSpooled),
    );
    counter(
      'redirector_clicks_replayed_total',
      'Clicks sent from the spool to the queue.',
      [],
      one(() => this.clicksReplayed),
    );
    gauge('redirector_click_spool_bytes', 'Bytes of click batches waiting in the spool.', () => this.gauges.spoolBytes());
    gauge('redirector_click_spooling', '1 while the queue is unreachable and click batches go to the spool, else 0.', () =>
      this.gauges.spooling() ? 1 : 0,
    );
    counter(
      'redirector_click_spool_write_failures_total',
      'Appends to the spool that the disk refused (full, read-only, gone); those batches stay in memory.',
      [],
      one(() => this.spoolWriteFailures),
    );
    counter(
      'redirector_click_spool_lines_set_aside_total',
      'Spool lines a replay could not read as a click batch (torn, or of a format this release does not read), kept in set-aside.jsonl.',
      [],
      one(() => this.spoolLinesSetAside),
    );
    counter(
      'redirector_click_batches_flushed_total',
      'Batch jobs written to the queue.',
      [],
      one(() => this.batchesFlushed),
    );
    counter(
      'redirector_click_batches_unreplicated_total',
      'Batch jobs (Redis Cluster) written without a replica confirming them in time.',
      [],
      one(() => this.unreplicatedBatches),
    );
    counter(
      'redirector_click_batches_rewritten_total',
      'Unconfirmed batch jobs (Redis Cluster) written once more, after a failover would have ended.',
      [],
      one(() => this.batchesRewritten),
    );
    counter(
      'redirector_queue_flush_errors_total',
      'Failed attempts to write a batch to the queue.',
      [],
      one(() => this.flushErrors),
    );
    gauge('redirector_click_buffer_size', 'Clicks held in memory, waiting for the queue.', () => this.gauges.bufferedClicks());
    gauge('redirector_uws_native', '1 when the native uWebSockets.js addon is in use, 0 on the JS fallback.', () =>
      this.gauges.native ? 1 : 0,
    );
  }
}
