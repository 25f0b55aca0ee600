import type { BreakdownRow } from '../lib/chart-data.js';
import { ChartCard } from './common.js';

const numberFormat = new Intl.NumberFormat('en');
const percent = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1 });

/** One breakdown (platforms, countries…) as horizontal bars, or as a table with the same numbers. */
export function Breakdown({ title, rows, dimension }: { title: string; rows: BreakdownRow[]; dimension: string }) {
  const max = Math.max(1, ...rows.map((row) => row.clicks));
  const bars =
    rows.length === 0 ? (
      <p class="muted">No clicks in this range.</p>
    ) : (
      <ul class="bars" aria-label={title}>
        {rows.map((row) => (
          <li key={row.key}>
            <span class="bar-label">{row.label}</span>
            <span class="bar-track">
              <span class="bar" style={{ width: `${(row.clicks / max) * 100}%` }} />
            </span>
            <span class="bar-value">{numberFormat.format(row.clicks)}</span>
          </li>
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
            <th scope="row">{row.label}</th>
            <td class="num">{row.clicks}</td>
            <td class="num">{percent.format(row.share)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
  return <ChartCard title={title} chart={bars} table={table} />;
}
