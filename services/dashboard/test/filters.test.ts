import { describe, expect, it } from 'vitest';
import {
  FILTER_PARAMS,
  type Filter,
  filterLabel,
  filterQuery,
  filterSearch,
  isFilterable,
  MAX_FILTER_VALUES,
  parseFilters,
  withFilter,
  withNegated,
  withoutFilter,
} from '../src/lib/filters.js';

const germany: Filter = { dimension: 'country', value: 'DE', exclude: false };
const notChrome: Filter = { dimension: 'browser', value: 'Chrome', exclude: true };

describe("the drill-down's filters", () => {
  it('travel under the API parameter names, included and excluded, for every dimension of the registry', () => {
    expect(FILTER_PARAMS).toEqual([
      'platform',
      'notPlatform',
      'country',
      'notCountry',
      'browser',
      'notBrowser',
      'os',
      'notOs',
      'device',
      'notDevice',
      'referrer',
      'notReferrer',
    ]);
    expect(filterQuery([germany, { ...germany, value: 'FR' }, notChrome])).toEqual({ country: ['DE', 'FR'], notBrowser: ['Chrome'] });
    expect(filterSearch([germany, notChrome]).toString()).toBe('country=DE&notBrowser=Chrome');
  });

  it('read back from an address as they were written, in the registry order', () => {
    const filters = [notChrome, germany, { dimension: 'referrer', value: 't.co', exclude: false } as Filter];
    const read = parseFilters(filterSearch(filters));
    expect(read).toEqual([germany, notChrome, filters[2]]);
    expect(parseFilters(filterSearch(read))).toEqual(read);
  });

  it('leave out of an address what the API would refuse: Other, repeats, over-long values, past the 20th', () => {
    const query = new URLSearchParams(`country=Other&country=DE&country=DE&browser=${'x'.repeat(201)}&range=7d&unknown=1`);
    expect(parseFilters(query)).toEqual([germany]);
    const many = new URLSearchParams(Array.from({ length: 25 }, (_, index) => ['os', `OS ${index}`]));
    expect(parseFilters(many)).toHaveLength(MAX_FILTER_VALUES);
    expect(isFilterable('Other')).toBe(false);
    expect(isFilterable('Unknown')).toBe(true);
    expect(isFilterable('direct')).toBe(true);
  });

  it('add a chosen value as included, switching an excluded one, and never past 20 values of a parameter', () => {
    expect(withFilter([], { dimension: 'country', value: 'DE' })).toEqual([germany]);
    expect(withFilter([{ ...germany, exclude: true }], { dimension: 'country', value: 'DE' })).toEqual([germany]);
    expect(withFilter([germany], { dimension: 'country', value: 'FR' })).toEqual([germany, { ...germany, value: 'FR' }]);
    const full = Array.from(
      { length: MAX_FILTER_VALUES },
      (_, index): Filter => ({ dimension: 'os', value: `OS ${index}`, exclude: false }),
    );
    expect(withFilter(full, { dimension: 'os', value: 'one more' })).toEqual(full);
    expect(
      withNegated([...full.slice(1), { dimension: 'os', value: 'x', exclude: true }], { dimension: 'os', value: 'x', exclude: true }),
    ).toHaveLength(20);
  });

  it('are removed and negated one at a time', () => {
    expect(withoutFilter([germany, notChrome], germany)).toEqual([notChrome]);
    expect(withNegated([germany, notChrome], germany)).toEqual([{ ...germany, exclude: true }, notChrome]);
    expect(withNegated([germany, notChrome], notChrome)).toEqual([germany, { ...notChrome, exclude: false }]);
  });

  it('read on their chips with the breakdowns’ labels', () => {
    expect(filterLabel(germany)).toBe('Country is Germany (DE)');
    expect(filterLabel(notChrome)).toBe('Browser is not Chrome');
    expect(filterLabel({ dimension: 'platform', value: 'ios', exclude: false })).toBe('Platform is iOS');
    expect(filterLabel({ dimension: 'referrer', value: 'direct', exclude: true })).toBe('Referrer is not direct');
  });
});
