/** Count, nearest-rank p50/p99, min, max and mean of a set of samples (all NaN when empty). */
export interface Summary {
  count: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/**
 * Nearest-rank percentile: the smallest sample with at least p % of the samples at or below it.
 * No interpolation, so the figure is always a latency that was actually observed.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile must be within 0-100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** Summarises latency or duration samples. */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { count: 0, p50: NaN, p99: NaN, min: NaN, max: NaN, mean: NaN };
  return {
    count: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    min: Math.min(...samples),
    max: Math.max(...samples),
    mean: samples.reduce((sum, value) => sum + value, 0) / samples.length,
  };
}

/** `value / reference`, or null when either is missing or the reference is not positive. */
export function ratio(value: number | undefined, reference: number | undefined): number | null {
  if (value === undefined || reference === undefined || !Number.isFinite(value) || !Number.isFinite(reference)) return null;
  return reference > 0 ? value / reference : null;
}

/** Events per second; 0 for an empty interval rather than Infinity. */
export function perSecond(count: number, milliseconds: number): number {
  return milliseconds > 0 ? (count * 1000) / milliseconds : 0;
}

/**
 * Connections for wrk's fixed-delay mode: each connection sends one request, waits for the answer,
 * then waits `delayMs`, so a connection sends about 1000 / (delayMs + latency) requests a second.
 */
export function connectionsForRate(targetRps: number, delayMs: number, latencyMs: number): number {
  return Math.max(1, Math.round((targetRps * (delayMs + latencyMs)) / 1000));
}

/** Parses a duration such as `10s`, `500ms`, `2m` or a bare number of seconds into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (!match) throw new Error(`not a duration: "${text}" (use 10s, 500ms or 2m)`);
  const value = Number(match[1]);
  const unit = match[2] ?? 's';
  return Math.round(value * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000));
}
