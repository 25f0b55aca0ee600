import { DIMENSION_NAMES, DIMENSIONS, type DimensionName, OTHER } from '@deeplink/core/dimensions';
import { valueLabel } from './breakdowns.js';

/**
 * The drill-down's filters: a click matches when, for every dimension filtered, its value is one
 * of the included values and none of the excluded ones. They live in the address under the
 * API's own parameter names (`country=DE&notBrowser=Chrome`), so a filtered view can be shared,
 * reloaded and gone back from, and the same pairs go to the API as they are.
 */
export interface Filter {
  dimension: DimensionName;
  /** The value as the report's breakdown keys it (`ios`, `DE`, `t.co`, `direct`). */
  value: string;
  /** Excludes the value instead of including it (`notCountry=DE`). */
  exclude: boolean;
}

/** The API's limits: at most this many values per parameter, each at most this long. */
export const MAX_FILTER_VALUES = 20;
export const MAX_FILTER_VALUE_LENGTH = 200;

/** `country` → `notCountry`. */
const excludeParam = (dimension: DimensionName) => `not${dimension[0]!.toUpperCase()}${dimension.slice(1)}`;

/** The address (and API) parameter a filter travels in. */
export const filterParam = (filter: Pick<Filter, 'dimension' | 'exclude'>): string =>
  filter.exclude ? excludeParam(filter.dimension) : filter.dimension;

/** Every parameter a filter can travel in, included and excluded, in the registry's order. */
export const FILTER_PARAMS: readonly string[] = DIMENSION_NAMES.flatMap((name) => [name, excludeParam(name)]);

/** Whether a breakdown's row can become a filter: `Other` is the rest of a top N, not a value the API can filter by. */
export const isFilterable = (value: string): boolean => value !== OTHER && value.length > 0 && value.length <= MAX_FILTER_VALUE_LENGTH;

/**
 * The filters an address carries, in the registry's order then the address's. Values the API
 * would refuse (Other, too long, past the 20th of a parameter) and repeats are left out, so a
 * hand-edited address still shows a page rather than an error.
 */
export function parseFilters(query: URLSearchParams): Filter[] {
  const filters: Filter[] = [];
  for (const dimension of DIMENSION_NAMES) {
    for (const exclude of [false, true]) {
      const values = [...new Set(query.getAll(filterParam({ dimension, exclude })))].filter(isFilterable);
      for (const value of values.slice(0, MAX_FILTER_VALUES)) filters.push({ dimension, value, exclude });
    }
  }
  return filters;
}

/** Filters as query parameters: each parameter (`country`, `notBrowser`…) with its values. */
export type FilterParams = Record<string, string[]>;

/** An API query with filter parameters added to it: they are sent as repeated parameters. */
export type Filtered<Q> = Q & { readonly [param: string]: unknown };

/** The filters as query parameters, for the address and for the API. */
export function filterQuery(filters: readonly Filter[]): FilterParams {
  const query: FilterParams = {};
  for (const filter of filters) (query[filterParam(filter)] ??= []).push(filter.value);
  return query;
}

/** The filters as an address's query (`country=DE&notBrowser=Chrome`). */
export function filterSearch(filters: readonly Filter[]): URLSearchParams {
  const search = new URLSearchParams();
  for (const filter of filters) search.append(filterParam(filter), filter.value);
  return search;
}

const sameFilter = (a: Filter, b: Filter) => a.dimension === b.dimension && a.value === b.value;

/**
 * The filters after a breakdown row was chosen: the value included (if it was excluded, it is now
 * included instead). Unchanged when the parameter already holds the API's maximum of values.
 */
export function withFilter(filters: readonly Filter[], added: Omit<Filter, 'exclude'>): Filter[] {
  const next: Filter = { ...added, exclude: false };
  const rest = filters.filter((filter) => !sameFilter(filter, next));
  if (rest.filter((filter) => filterParam(filter) === filterParam(next)).length >= MAX_FILTER_VALUES) return [...filters];
  return [...rest, next];
}

/** The filters without `removed`. */
export const withoutFilter = (filters: readonly Filter[], removed: Filter): Filter[] =>
  filters.filter((filter) => !sameFilter(filter, removed));

/** The filters with `flipped` excluded instead of included, or the other way round (unless the other parameter is full). */
export function withNegated(filters: readonly Filter[], flipped: Filter): Filter[] {
  const target = { ...flipped, exclude: !flipped.exclude };
  if (filters.filter((filter) => filterParam(filter) === filterParam(target)).length >= MAX_FILTER_VALUES) return [...filters];
  return filters.map((filter) => (sameFilter(filter, flipped) ? target : filter));
}

/** Whether the report's breakdown has the value among the filters (so its row reads as chosen). */
export const findFilter = (filters: readonly Filter[], dimension: DimensionName, value: string): Filter | undefined =>
  filters.find((filter) => filter.dimension === dimension && filter.value === value);

/** How a filter reads on its chip: "Country is Germany (DE)", "Browser is not Chrome". */
export function filterLabel(filter: Filter): string {
  return `${DIMENSIONS[filter.dimension].label} ${filter.exclude ? 'is not' : 'is'} ${valueLabel(filter.dimension)(filter.value)}`;
}
