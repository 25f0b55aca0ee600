import { type BreakdownKey, DIMENSION_NAMES, DIMENSIONS, type DimensionName, type DimensionSpec } from '@deeplink/core/dimensions';
import { type BreakdownRow, breakdownRows, countryName } from './chart-data.js';

/** How a dimension's values read: the registry's labels for known values, country names for country codes. */
export function valueLabel(name: DimensionName): (key: string) => string {
  if (name === 'country') return countryName;
  const { values }: DimensionSpec = DIMENSIONS[name];
  if (values.kind === 'fixed') return (key) => values.values[key]?.label ?? key;
  return (key) => key;
}

/** One breakdown as the link page shows it: its heading, the name of its values' column, and its rows. */
export interface ReportBreakdown {
  name: DimensionName;
  title: string;
  label: string;
  rows: BreakdownRow[];
}

/** Every dimension's breakdown of a report, in the registry's order. */
export function reportBreakdowns(report: Readonly<Record<BreakdownKey, Record<string, number>>>): ReportBreakdown[] {
  return DIMENSION_NAMES.map((name) => {
    const { title, label, response }: DimensionSpec = DIMENSIONS[name];
    return { name, title, label, rows: breakdownRows(report[response as BreakdownKey], valueLabel(name)) };
  });
}
