import type { TimeBucket } from '@deeplink/client';
import { bucketLabel } from '../lib/chart-data.js';

/** One numeric column of a series table. */
export interface SeriesColumn<T> {
  label: string;
  value: (point: T) => number;
}

/** A time series as a table: a row per bucket, labelled in `timeZone`, and a column per value: the charts' table alternative. */
export function SeriesTable<T extends { date: string }>({
  points,
  bucket,
  timeZone,
  columns,
}: {
  points: readonly T[];
  bucket: TimeBucket;
  timeZone: string;
  columns: readonly SeriesColumn<T>[];
}) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">
            {bucket[0]!.toUpperCase() + bucket.slice(1)} ({timeZone})
          </th>
          {columns.map((column) => (
            <th scope="col" class="num" key={column.label}>
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {points.map((point) => (
          <tr key={point.date}>
            <th scope="row">{bucketLabel(point.date, bucket, timeZone)}</th>
            {columns.map((column) => (
              <td class="num" key={column.label}>
                {column.value(point)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
