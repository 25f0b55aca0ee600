// Filters of the analytics reads: per dimension of the registry, a query parameter naming the
// values a click must have (`country=DE`) and one naming values it must not have (`notCountry=US`).
// Values are written as the breakdowns show them and turned here into the form the rollups store,
// so the SQL compares stored values only. Only dimensions.ts is imported: the dashboard may bundle
// this file as it is.
import { DIMENSION_NAMES, DIMENSIONS, type DimensionName, type DimensionSpec, OTHER } from './dimensions.js';

/** Most values one filter parameter may name. */
export const MAX_FILTER_VALUES = 20;
/** Longest value, in characters. */
export const MAX_FILTER_VALUE_LENGTH = 200;

/** A filter parameter: the dimension's name (any of) or `not` and its capitalised name (none of). */
export type FilterParameter = DimensionName | `not${Capitalize<DimensionName>}`;

/** One parameter of a request, its values in stored form: a click matches when its value is (or, negated, is not) one of them. */
export interface DimensionFilter {
  dimension: DimensionName;
  negated: boolean;
  values: string[];
}

/** Every filter of a request; the clicks that match all of them are counted. Empty: no filter. */
export type AnalyticsFilter = readonly DimensionFilter[];

const capitalise = <N extends DimensionName>(name: N) => `${name[0]!.toUpperCase()}${name.slice(1)}` as Capitalize<N>;

/** Every filter parameter, in registry order, each with its dimension and sense. */
export const FILTER_PARAMETERS: readonly { parameter: FilterParameter; dimension: DimensionName; negated: boolean }[] =
  DIMENSION_NAMES.flatMap((dimension) => [
    { parameter: dimension, dimension, negated: false },
    { parameter: `not${capitalise(dimension)}` as const, dimension, negated: true },
  ]);

/** A value in stored form, or the reason it is refused. */
type Spelling = { stored: string } | { error: string };

/**
 * Values of a dimension with fixed values, matched case-insensitively against both the stored
 * value and its label: `iOS`, `ios` and `IOS` are all the stored `ios`.
 */
const fixedSpelling = (spec: DimensionSpec): ((value: string) => Spelling) => {
  if (spec.values.kind !== 'fixed') throw new Error(`${spec.response} has no fixed values`);
  const byName = new Map<string, string>();
  for (const [stored, { label }] of Object.entries(spec.values.values)) {
    byName.set(stored.toLowerCase(), stored);
    byName.set(label.toLowerCase(), stored);
  }
  const labels = Object.values(spec.values.values).map(({ label }) => label);
  return (value) => {
    const stored = byName.get(value.toLowerCase());
    return stored === undefined ? { error: `must be one of ${labels.join(', ')}` } : { stored };
  };
};

const UNKNOWN = 'Unknown';

/**
 * How each dimension's values are written in a filter, and turned into what the rollups store (the
 * worker's spelling, services/worker/src/click-enricher.ts). A new dimension does not compile
 * until it has its entry.
 */
const SPELLINGS: Record<DimensionName, (value: string) => Spelling> = {
  platform: fixedSpelling(DIMENSIONS.platform),
  device: fixedSpelling(DIMENSIONS.device),
  // ISO codes are stored upper case; `Unknown` for addresses no database places.
  country: (value) =>
    /^[A-Za-z]{2}$/.test(value)
      ? { stored: value.toUpperCase() }
      : value.toLowerCase() === UNKNOWN.toLowerCase()
        ? { stored: UNKNOWN }
        : { error: `must be an ISO country code (DE) or ${UNKNOWN}` },
  // Names as ua-parser-js gives them, compared exactly.
  browser: (value) => ({ stored: value }),
  os: (value) => ({ stored: value }),
  // Hosts are stored lower case, and so is `direct`.
  referrer: (value) => ({ stored: value.toLowerCase() }),
};

/** Control characters (NUL included: PostgreSQL text cannot hold it) and unpaired UTF-16 surrogates. */
const UNSTORABLE = /[\u0000-\u001f\u007f]|[\uD800-\uDFFF]/u;

/**
 * The values of one filter parameter as given (once, repeated, or absent) in stored form, or the
 * reason the parameter is refused: too many values, an empty, overlong or unprintable one, a value
 * the dimension cannot have, or the top-N rest label (`Other` is what a breakdown adds up, not a
 * value a click has).
 */
export function parseFilterValues(dimension: DimensionName, given: string | readonly string[]): { values: string[] } | { error: string } {
  const list = typeof given === 'string' ? [given] : given;
  if (list.length > MAX_FILTER_VALUES) return { error: `must name at most ${MAX_FILTER_VALUES} values` };
  const values: string[] = [];
  for (const value of list) {
    if (value === '') return { error: 'must not be empty' };
    if (value.length > MAX_FILTER_VALUE_LENGTH) return { error: `must be at most ${MAX_FILTER_VALUE_LENGTH} characters` };
    if (UNSTORABLE.test(value)) return { error: 'must be printable text (no control characters or unpaired surrogates)' };
    if (value.toLowerCase() === OTHER.toLowerCase()) {
      return { error: `cannot be ${OTHER}: it is the rest of a breakdown's top values, not a value of a click` };
    }
    const spelling = SPELLINGS[dimension](value);
    if ('error' in spelling) return spelling;
    if (!values.includes(spelling.stored)) values.push(spelling.stored);
  }
  return { values };
}

/** The filters of a parsed query: every filter parameter it carries, in registry order. */
export function filterOf(query: Partial<Record<FilterParameter, readonly string[]>>): AnalyticsFilter {
  return FILTER_PARAMETERS.flatMap(({ parameter, dimension, negated }) => {
    const values = query[parameter];
    return values && values.length > 0 ? [{ dimension, negated, values: [...values] }] : [];
  });
}

/**
 * Whether app events follow the filter. They carry a platform and nothing else, so they are
 * filtered when every filter is on the platform, and left whole when any filter is on another
 * dimension (they could not be told apart). True without filters.
 */
export const appEventsFollow = (filter: AnalyticsFilter): boolean => filter.every(({ dimension }) => dimension === 'platform');
