// The combination rollups (click_hourly_combinations, click_daily_combinations): per link and hour
// (or UTC day), the clicks of each combination of the dimensions' values. Reports under filters
// read them; docs/analytics.md, "Filters", describes the rules below.
import type { DimensionName } from './dimensions.js';

/**
 * The combination tables' value columns, in the order of their primary key. One per dimension of
 * the registry: a dimension missing here does not compile (and needs a migration adding its column).
 */
export const COMBINATION_COLUMNS = ['platform', 'device', 'country', 'browser', 'os', 'referrer'] as const satisfies readonly DimensionName[];

/** A value column of the combination tables: the name of its dimension. */
export type CombinationColumn = (typeof COMBINATION_COLUMNS)[number];

type MissingColumn = Exclude<DimensionName, CombinationColumn>;
// Fails to compile while a dimension has no column.
const everyDimensionHasAColumn: [MissingColumn] extends [never] ? true : MissingColumn = true;
void everyDimensionHasAColumn;

/**
 * Per link and UTC hour, how many distinct referrer hosts keep their name in the combination
 * tables; the clicks of further hosts are stored there under OTHER. Every host multiplies the
 * combinations of an hour, and a link shared widely has a long tail of hosts with a click or two
 * each. `direct` (no referrer) is not a host: it always keeps its name and is not counted.
 */
export const COMBINATION_REFERRERS_PER_HOUR = 100;
