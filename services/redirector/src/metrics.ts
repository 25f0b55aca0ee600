type Layer = 'lru' | 'redis' | 'db';

/** Every status a short-link request is answered with, in the order /metrics lists them. */
const STATUSES = [200, 302, 404, 410, 503] as const;
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
  clicksBuffered = 0;
  clicksFlushed = 0;
  clicksDropped = 0;
  batchesFlushed = 0;
  flushErrors = 0;
  /** On Redis Cluster: batches written to the queue's primary that no replica confirmed in time. */
  unreplicatedBatches = 0;

  constructor(
    private readonly gauges: { bufferedClicks: () => number; lruSize: () => number; native: boolean },
  ) {}

  response(status: ResponseStatus): void {
    this.responses[status]!++;
  }

  /** Prometheus text exposition format 0.0.4. */
  render(): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    const byLayer = (values: Record<string, number>) =>
      Object.entries(values).map(([layer, n]): [string, number] => [`{layer="${layer}"}`, n]);
    metric('redirector_responses_total', 'counter', 'Short-link answers by HTTP status.',
      STATUSES.filter((status) => this.responses[status]! > 0).map((status) => [`{status="${status}"}`, this.responses[status]!]));
    metric('redirector_link_cache_hits_total', 'counter', 'Link lookups answered by a layer (including negative entries).', byLayer(this.hits));
    metric('redirector_link_cache_misses_total', 'counter', 'Link lookups a layer could not answer; db misses are unknown codes.', byLayer(this.misses));
    metric('redirector_link_lookup_errors_total', 'counter', 'Lookups that failed at a layer.', byLayer(this.lookupErrors));
    metric('redirector_link_refresh_errors_total', 'counter', 'Background refreshes of an LRU entry past its TTL that failed; the entry keeps answering.', [['', this.refreshErrors]]);
    metric('redirector_link_cache_entries', 'gauge', 'Entries in the in-process link cache.', [['', this.gauges.lruSize()]]);
    metric('redirector_clicks_buffered_total', 'counter', 'Clicks accepted into the in-memory buffer.', [['', this.clicksBuffered]]);
    metric('redirector_clicks_flushed_total', 'counter', 'Clicks written to the queue.', [['', this.clicksFlushed]]);
    metric('redirector_clicks_dropped_total', 'counter', 'Clicks dropped because the buffer was full.', [['', this.clicksDropped]]);
    metric('redirector_click_batches_flushed_total', 'counter', 'Batch jobs written to the queue.', [['', this.batchesFlushed]]);
    metric('redirector_click_batches_unreplicated_total', 'counter', 'Batch jobs (Redis Cluster) written without a replica confirming them in time.', [['', this.unreplicatedBatches]]);
    metric('redirector_queue_flush_errors_total', 'counter', 'Failed attempts to write a batch to the queue.', [['', this.flushErrors]]);
    metric('redirector_click_buffer_size', 'gauge', 'Clicks held in memory, waiting for the queue.', [['', this.gauges.bufferedClicks()]]);
    metric('redirector_uws_native', 'gauge', '1 when the native uWebSockets.js addon is in use, 0 on the JS fallback.', [['', this.gauges.native ? 1 : 0]]);
    return `${lines.join('\n')}\n`;
  }
}
