import { Readable } from 'node:stream';
import type { BucketCount, WideBucket } from '@deeplink/core/db';
import { csvLine } from './csv.js';
import { OTHER } from './top-n.js';

/** Columns of the long CSV export, in order; the JSON export uses the same names. */
export const EXPORT_COLUMNS = ['bucket', 'dimension', 'value', 'clicks'] as const;

/** Columns of the account-wide long export: the link first, then the per-link columns. */
export const ACCOUNT_LONG_COLUMNS = ['link_id', ...EXPORT_COLUMNS] as const;

/** The fixed columns of the wide layout; the top countries and browsers follow as columns of their own. */
export const WIDE_COLUMNS = [
  'link_id',
  'title',
  'short_url',
  'bucket_start',
  'clicks',
  'unique_clicks',
  'android',
  'ios',
  'desktop',
  'mobile',
  'desktop_device',
] as const;

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
 * The wide layout: one record per link and bucket. `countries` and `browsers` are the values that
 * get a column of their own (the export's top ones, `Other` last); every other value of the
 * bucket is added to the `Other` column, so each group of columns adds up to `clicks`.
 */
export function wideLayout(countries: readonly string[], browsers: readonly string[]) {
  const columns = [...WIDE_COLUMNS, ...countries.map((value) => `country_${value}`), ...browsers.map((value) => `browser_${value}`)];
  const at = (column: (typeof WIDE_COLUMNS)[number]) => WIDE_COLUMNS.indexOf(column);
  const positions = new Map<string, number>([
    ['platform android', at('android')],
    ['platform ios', at('ios')],
    ['platform desktop', at('desktop')],
    ['device Mobile', at('mobile')],
    ['device Desktop', at('desktop_device')],
  ]);
  for (const [i, value] of countries.entries()) positions.set(`country ${value}`, WIDE_COLUMNS.length + i);
  for (const [i, value] of browsers.entries()) positions.set(`browser ${value}`, WIDE_COLUMNS.length + countries.length + i);
  const otherOf = { country: positions.get(`country ${OTHER}`), browser: positions.get(`browser ${OTHER}`) } as Record<
    string,
    number | undefined
  >;

  const record = (link: WideLink, bucket: WideBucket): Value[] => {
    const values: Value[] = [link.id, link.title, link.shortUrl, bucket.bucket.toISOString(), bucket.clicks, bucket.uniqueClicks];
    for (let i = values.length; i < columns.length; i++) values.push(0);
    bucket.dimensions.forEach((dimension, i) => {
      const key = `${dimension} ${bucket.values[i]}`;
      const column = positions.get(key) ?? otherOf[dimension];
      if (column !== undefined) values[column] = (values[column] as number) + bucket.counts[i]!;
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
