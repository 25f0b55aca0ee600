import type { BreakdownRow } from '../lib/chart-data.js';
import { ChartCard } from './common.js';

const numberFormat = new Intl.NumberFormat(undefined);
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });

/**
 * What choosing a row does (filter the page by its value, open a link), and how it reads to a
 * screen reader: `describe(row)` says what it does ("Filter by Country"), read before the row's own
 * text. Rows `can` refuses stay plain text.
 */
export interface RowChoice {
  choose: (row: BreakdownRow) => void;
  describe: (row: BreakdownRow) => string;
  can?: (row: BreakdownRow) => boolean;
  /** Whether the row's value is among the page's filters: shown as chosen. */
  chosen?: (row: BreakdownRow) => boolean;
}

/**
 * One breakdown (platforms, countries…) as horizontal bars, or as a table with the same numbers.
 * With `choice`, each row is a button (in both forms).
 */
export function Breakdown({
  title,
  rows,
  dimension,
  choice,
  empty = 'No clicks in this range.',
}: {
  title: string;
  rows: BreakdownRow[];
  dimension: string;
  choice?: RowChoice;
  empty?: string;
}) {
  const max = Math.max(1, ...rows.map((row) => row.clicks));
  const choosable = (row: BreakdownRow) => choice !== undefined && (choice.can?.(row) ?? true);
  // The button's name is what it does, then what it shows, so it holds its visible text (WCAG
  // 2.5.3): a table's row names its value; a bar also shows the count, said as "… 3 clicks".
  const button = (row: BreakdownRow, className: string, content: preact.ComponentChildren, bar = false) => (
    <button
      type="button"
      class={className}
      aria-label={bar ? undefined : `${choice!.describe(row)} ${row.label}`}
      aria-pressed={choice!.chosen ? choice!.chosen(row) : undefined}
      onClick={() => choice!.choose(row)}
    >
      {bar && <span class="visually-hidden">{choice!.describe(row)} </span>}
      {content}
      {bar && <span class="visually-hidden"> clicks</span>}
    </button>
  );
  const bar = (row: BreakdownRow) => (
    <>
      <span class="bar-label">{row.label}</span>{' '}
      <span class="bar-track">
        <span class="bar" style={{ width: `${(row.clicks / max) * 100}%` }} />
      </span>{' '}
      <span class="bar-value">{numberFormat.format(row.clicks)}</span>
    </>
  );
  const bars =
    rows.length === 0 ? (
      <p class="muted">{empty}</p>
    ) : (
      <ul class="bars" aria-label={title}>
        {rows.map((row) => (
          <li key={row.key}>{choosable(row) ? button(row, 'bar-row', bar(row), true) : <span class="bar-row">{bar(row)}</span>}</li>
        ))}
      </ul>
    );
  const table = () => (
    <table>
      <thead>
        <tr>
          <th scope="col">{dimension}</th>
          <th scope="col" class="num">
            Clicks
          </th>
          <th scope="col" class="num">
            Share
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{choosable(row) ? button(row, 'link', row.label) : row.label}</th>
            <td class="num">{row.clicks}</td>
            <td class="num">{percent.format(row.share)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
  return <ChartCard title={title} chart={bars} table={table} />;
}
