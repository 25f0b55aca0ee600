import type { BreakdownKey } from '@deeplink/core/dimensions';
import { reportBreakdowns } from '../lib/breakdowns.js';
import { type Filter, findFilter, isFilterable, withFilter, withoutFilter } from '../lib/filters.js';
import { Breakdown } from './breakdown.js';

/**
 * Every dimension's breakdown of a report (or summary), each row a button that filters the page
 * by its value; choosing a row already included removes that filter again. `Other` rows (the rest
 * of a top N) are not values and cannot be chosen.
 */
export function ReportBreakdowns({
  report,
  filters,
  onFilter,
  empty,
}: {
  report: Readonly<Record<BreakdownKey, Record<string, number>>>;
  filters: readonly Filter[];
  onFilter: (next: Filter[]) => void;
  empty?: string;
}) {
  return (
    <div class="breakdowns">
      {reportBreakdowns(report).map(({ name, title, label, rows }) => (
        <Breakdown
          key={name}
          title={title}
          dimension={label}
          rows={rows}
          empty={empty}
          choice={{
            can: (row) => isFilterable(row.key),
            chosen: (row) => findFilter(filters, name, row.key)?.exclude === false,
            describe: () => `Filter by ${label}`,
            choose: (row) => {
              const existing = findFilter(filters, name, row.key);
              onFilter(
                existing && !existing.exclude ? withoutFilter(filters, existing) : withFilter(filters, { dimension: name, value: row.key }),
              );
            },
          }}
        />
      ))}
    </div>
  );
}
