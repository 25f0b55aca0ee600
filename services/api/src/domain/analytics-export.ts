import { Readable } from 'node:stream';
import type { AnalyticsExportRow } from '@deeplink/core';
import type { BucketCount } from '@deeplink/core/db';
import { csvLine } from './csv.js';

/** Columns of the CSV export, in order; the JSON export uses the same names. */
export const EXPORT_COLUMNS = ['bucket', 'dimension', 'value', 'clicks'] as const;

/** Media type of each export format. */
export const EXPORT_CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', json: 'application/json; charset=utf-8' } as const;

const toRow = (count: BucketCount): AnalyticsExportRow => ({
  bucket: count.bucket.toISOString(),
  dimension: count.dimension,
  value: count.value,
  clicks: count.clicks,
});

async function* csv(batches: AsyncIterable<BucketCount[]>): AsyncGenerator<string> {
  yield csvLine(EXPORT_COLUMNS);
  for await (const batch of batches) {
    yield batch.map((count) => {
      const row = toRow(count);
      return csvLine(EXPORT_COLUMNS.map((column) => row[column]));
    }).join('');
  }
}

/** A JSON array written one batch at a time: one row object per line between the brackets. */
async function* jsonArray(batches: AsyncIterable<BucketCount[]>): AsyncGenerator<string> {
  let separator = '[\n';
  for await (const batch of batches) {
    let chunk = '';
    for (const count of batch) {
      chunk += `${separator}${JSON.stringify(toRow(count))}`;
      separator = ',\n';
    }
    yield chunk;
  }
  yield separator === '[\n' ? '[]\n' : '\n]\n';
}

/** Encodes export rows as a byte stream in the chosen format, pulling rows only as fast as the client reads. */
export function encodeExport(batches: AsyncIterable<BucketCount[]>, format: keyof typeof EXPORT_CONTENT_TYPES): Readable {
  return Readable.from(format === 'csv' ? csv(batches) : jsonArray(batches));
}

/**
 * Reads the first batch before anything is sent, so a failing query still becomes an error
 * response instead of a truncated file. Stopping early (a client that hangs up) closes the source.
 */
export async function startReading<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  return (async function* () {
    let done = first.done;
    try {
      if (!first.done) yield first.value;
      while (!done) {
        const next = await iterator.next();
        done = next.done;
        if (!next.done) yield next.value;
      }
    } finally {
      if (!done) await iterator.return?.();
    }
  })();
}
