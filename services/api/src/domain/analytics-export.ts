import { Readable } from 'node:stream';
import {
  DIMENSION_NAMES,
  DIMENSIONS,
  type DimensionSpec,
  TOP_DIMENSION_NAMES,
  type TopDimensionName,
  WIDE_APP_EVENT_COLUMNS,
  WIDE_FIXED_COLUMNS,
} from '@deeplink/core';
import type { BucketCount, WideBucket } from '@deeplink/core/db';
import { csvLine } from './csv.js';

/** Columns of the long CSV export, in order; the JSON export uses the same names. */
export const EXPORT_COLUMNS = ['bucket', 'dimension', 'value', 'clicks'] as const;

/** Columns of the account-wide long export: the link first, then the per-link columns. */
export const ACCOUNT_LONG_COLUMNS = ['link_id', ...EXPORT_COLUMNS] as const;

/** Media type of each export format. */
export const EXPORT_CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', json: 'application/json; charset=utf-8' } as const;
export type ExportFormat = keyof typeof EXPORT_CONTENT_TYPES;

type Value = string | number;

async function* csv(columns: readonly string[], batches: AsyncIterable<Value[][]>): AsyncGenerator<string> {
  yield csvLine(columns);
  for await (const batch of batches) yield batch.map((record) => csvLine(record)).join('');
}

/** A JSON array written one batch at a time: one object (keys in column order) per line between the brackets. */
async function* jsonArray(columns: readonly string[], batches: AsyncIterable<Value[][]>): AsyncGenerator<string> {
  let separator = '[\n';
  for await (const batch of batches) {
    let chunk = '';
    for (const record of batch) {
      const row: Record<string, Value> = {};
      columns.forEach((column, i) => {
        row[column] = record[i]!;
      });
      chunk += `${separator}${JSON.stringify(row)}`;
      separator = ',\n';
    }
    yield chunk;
  }
  yield separator === '[\n' ? '[]\n' : '\n]\n';
}

/** Encodes records (values in `columns` order) as a byte stream, pulling them only as fast as the client reads. */
export function encodeRecords(columns: readonly string[], batches: AsyncIterable<Value[][]>, format: ExportFormat): Readable {
  return Readable.from(format === 'csv' ? csv(columns, batches) : jsonArray(columns, batches));
}

async function* mapBatches<T>(batches: AsyncIterable<T[]>, toRecord: (item: T) => Value[]): AsyncGenerator<Value[][]> {
  for await (const batch of batches) yield batch.map(toRecord);
}

const longRecord = (count: BucketCount): Value[] => [count.bucket.toISOString(), count.dimension, count.value, count.clicks];

/** Encodes one link's long export rows in the chosen format. */
export function encodeExport(batches: AsyncIterable<BucketCount[]>, format: ExportFormat): Readable {
  return encodeRecords(EXPORT_COLUMNS, mapBatches(batches, longRecord), format);
}

/** The long rows of several links, each row led by its link's id. */
export async function* accountLongRecords(
  links: readonly { id: string; rows: () => AsyncIterable<BucketCount[]> }[],
): AsyncGenerator<Value[][]> {
  for (const link of links) yield* mapBatches(link.rows(), (count) => [link.id, ...longRecord(count)]);
}

/** The link columns of a wide row. */
export interface WideLink {
  id: string;
  title: string;
  shortUrl: string;
}

/**
 * The wide layout: one record per link and bucket. `top` holds, per open-ended dimension, the
 * values that get a column of their own (the export's top ones, its rest label last); every other
 * value of the bucket is added to the dimension's rest column, so each group of columns adds up to
 * `clicks`. The fixed columns come first (WIDE_FIXED_COLUMNS), then the app events per platform
 * (WIDE_APP_EVENT_COLUMNS), then each dimension's top columns in registry order.
 */
export function wideLayout(top: Readonly<Record<TopDimensionName, readonly string[]>>) {
  const columns: string[] = [...WIDE_FIXED_COLUMNS];
  /** `<dimension> <value>` → the column it is counted in. */
  const positions = new Map<string, number>();
  for (const name of DIMENSION_NAMES) {
    const { values }: DimensionSpec = DIMENSIONS[name];
    if (values.kind !== 'fixed') continue;
    for (const [value, { wideColumn }] of Object.entries(values.values)) positions.set(`${name} ${value}`, columns.indexOf(wideColumn));
  }
  /** `<event> <platform>` → its column, right after the fixed ones: every event on every platform, 0 when none. */
  const eventPositions = new Map<string, number>();
  for (const { event, platform, column } of WIDE_APP_EVENT_COLUMNS) {
    eventPositions.set(`${event} ${platform}`, columns.length);
    columns.push(column);
  }
  const restOf = new Map<string, number>();
  for (const name of TOP_DIMENSION_NAMES) {
    const { values } = DIMENSIONS[name];
    for (const value of top[name]) {
      positions.set(`${name} ${value}`, columns.length);
      columns.push(`${values.widePrefix}${value}`);
    }
    const rest = positions.get(`${name} ${values.rest}`);
    if (rest !== undefined) restOf.set(name, rest);
  }

  const record = (link: WideLink, bucket: WideBucket): Value[] => {
    const values: Value[] = [link.id, link.title, link.shortUrl, bucket.bucket.toISOString(), bucket.clicks, bucket.uniqueClicks];
    for (let i = values.length; i < columns.length; i++) values.push(0);
    bucket.dimensions.forEach((dimension, i) => {
      const key = `${dimension} ${bucket.values[i]}`;
      const column = positions.get(key) ?? restOf.get(dimension);
      if (column !== undefined) values[column] = (values[column] as number) + bucket.counts[i]!;
    });
    bucket.events.forEach((event, i) => {
      // The worker writes only known events and platforms; anything else has no column.
      const column = eventPositions.get(`${event} ${bucket.eventPlatforms[i]}`);
      if (column !== undefined) values[column] = (values[column] as number) + bucket.eventCounts[i]!;
    });
    return values;
  };
  return { columns, record };
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
