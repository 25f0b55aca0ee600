import { describe, expect, it } from 'vitest';
import { DIMENSION_NAMES, DIMENSIONS, WIDE_APP_EVENT_COLUMNS, WIDE_FIXED_COLUMNS } from '@deeplink/core';
import { wideLayout } from '../src/domain/analytics-export.js';
import { bucketIsoStrings, resolveRange } from '../src/domain/analytics-range.js';
import { breakdowns } from '../src/domain/breakdowns.js';
import { csvField, csvLine } from '../src/domain/csv.js';
import { contentDisposition } from '../src/routes/analytics-routes.js';
import { topN, withLabels } from '../src/domain/top-n.js';

describe('breakdowns from the registry', () => {
  it('gives every dimension its breakdown: fixed values zero-filled, open-ended ones folded after the top 10', () => {
    const oses = Array.from({ length: 12 }, (_, i) => ({ dimension: 'os' as const, value: `os-${String(i).padStart(2, '0')}`, clicks: 1 }));
    const result = breakdowns([{ dimension: 'platform', value: 'ios', clicks: 4 }, ...oses]);
    expect(Object.keys(result)).toEqual(DIMENSION_NAMES.map((name) => DIMENSIONS[name].response));
    expect(result.platforms).toEqual({ android: 0, ios: 4, desktop: 0 });
    expect(result.devices).toEqual({ Mobile: 0, Desktop: 0 });
    expect(result.os).toMatchObject({ 'os-00': 1, 'os-09': 1, Other: 2 });
    expect(Object.keys(result.os)).toHaveLength(11);
    expect(result.countries).toEqual({});
  });

  it('lays the wide export out as fixed columns, the app events per platform, then each open-ended dimension in registry order, its rest last', () => {
    const layout = wideLayout({
      country: ['US', 'Other'],
      browser: ['Chrome', 'Other'],
      os: ['iOS', 'Other'],
      referrer: ['t.co', 'Other'],
    });
    expect(layout.columns).toEqual([
      ...WIDE_FIXED_COLUMNS,
      ...WIDE_APP_EVENT_COLUMNS.map(({ column }) => column),
      'country_US',
      'country_Other',
      'browser_Chrome',
      'browser_Other',
      'os_iOS',
      'os_Other',
      'referrer_t.co',
      'referrer_Other',
    ]);
    const record = layout.record(
      { id: 'l', title: 't', shortUrl: 'u' },
      {
        bucket: new Date('2026-03-01T00:00:00Z'),
        clicks: 3,
        uniqueClicks: 2,
        dimensions: ['platform', 'device', 'os', 'os', 'referrer'],
        values: ['ios', 'Mobile', 'iOS', 'Android', 'news.example'],
        counts: [3, 3, 2, 1, 3],
        events: ['REDIRECT', 'APP_FIRST_OPEN', 'APP_FIRST_OPEN', 'SOMETHING_NEW'],
        eventPlatforms: ['IOS', 'IOS', 'ANDROID', 'IOS'],
        eventCounts: [2, 1, 4, 9],
      },
    );
    const at = (column: string) => record[layout.columns.indexOf(column)];
    expect([at('ios'), at('mobile'), at('os_iOS'), at('os_Other'), at('referrer_Other'), at('country_Other')]).toEqual([3, 3, 2, 1, 3, 0]);
    expect([at('redirect_ios'), at('app_first_open_ios'), at('app_first_open_android'), at('app_install_ios')]).toEqual([2, 1, 4, 0]);
    // An event the layout does not know is in no column: the row keeps its length, every event column is a number.
    expect(record).toHaveLength(layout.columns.length);
    expect(WIDE_APP_EVENT_COLUMNS.map(({ column }) => at(column)).reduce((sum, count) => Number(sum) + Number(count), 0)).toBe(7);
  });
});

describe('topN', () => {
  it('breaks ties by label, so equal counts always give the same top N', () => {
    const labels = ['l', 'k', 'j', 'i', 'h', 'g', 'f', 'e', 'd', 'c', 'b', 'a'];
    const forwards = topN(labels.map((label) => [label, 1]));
    const backwards = topN([...labels].reverse().map((label) => [label, 1]));
    expect(forwards).toEqual({ a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1, h: 1, i: 1, j: 1, Other: 2 });
    expect(Object.entries(backwards)).toEqual(Object.entries(forwards));
  });

  it('adds a real `Other` value to the folded rest and leaves ten or fewer values alone', () => {
    const counts = Array.from({ length: 11 }, (_, i): [string, number] => [`v${i}`, 20 - i]);
    expect(topN([...counts, ['Other', 15]])).toMatchObject({ Other: 15 + 11 + 10 });
    expect(topN(counts.slice(0, 10))).toEqual(Object.fromEntries(counts.slice(0, 10)));
  });

  it('keeps a fixed label set with zeros', () => {
    expect(withLabels(['android', 'ios', 'desktop'], [['ios', 2]])).toEqual({ android: 0, ios: 2, desktop: 0 });
  });
});

describe('CSV', () => {
  it('quotes only fields that need it and doubles quotes', () => {
    expect(csvField('Chrome')).toBe('Chrome');
    expect(csvField(42)).toBe('42');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvLine(['x', 'y,z', 3])).toBe('x,"y,z",3\r\n');
  });

  it('neutralises formulas, also after a leading semicolon (spreadsheets that separate with ;)', () => {
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField(';=HYPERLINK("x")')).toBe('"\';=HYPERLINK(""x"")"');
    expect(csvField(';+1')).toBe(`"';+1"`);
    expect(csvField(';@cmd')).toBe(`"';@cmd"`);
    // Quoted, a later semicolon cannot start a cell of its own.
    expect(csvField('sale;=1+1')).toBe('"sale;=1+1"');
    expect(csvField('a;b')).toBe('"a;b"');
    expect(csvField(-5)).toBe('-5');
  });
});

describe('resolveRange', () => {
  const now = new Date('2026-03-15T13:45:00Z');
  const resolve = (query: { startDate?: string; endDate?: string; timeBucket?: 'hour' | 'day' | 'week' | 'month' }) => {
    const range = resolveRange({ timeBucket: 'day', ...query }, now);
    return { start: range.start.toISOString(), end: range.end.toISOString(), buckets: range.buckets.length };
  };

  it('defaults to the 30 UTC days ending today', () => {
    expect(resolve({})).toEqual({ start: '2026-02-14T00:00:00.000Z', end: '2026-03-16T00:00:00.000Z', buckets: 30 });
  });

  it('widens date-times to whole hours and includes the end instant', () => {
    expect(resolve({ startDate: '2026-03-01T10:30:00Z', endDate: '2026-03-01T12:00:00Z', timeBucket: 'hour' })).toEqual({
      start: '2026-03-01T10:00:00.000Z',
      end: '2026-03-01T13:00:00.000Z',
      buckets: 3,
    });
    expect(resolve({ startDate: '2026-03-01T10:30:00Z', endDate: '2026-03-01T10:30:00Z', timeBucket: 'hour' }).buckets).toBe(1);
  });

  it('counts partial first and last weeks and months', () => {
    // Wednesday to the Tuesday after: two ISO weeks.
    expect(resolve({ startDate: '2026-03-04', endDate: '2026-03-10', timeBucket: 'week' }).buckets).toBe(2);
    expect(resolve({ startDate: '2026-03-02', endDate: '2026-03-08', timeBucket: 'week' }).buckets).toBe(1);
    expect(resolve({ startDate: '2024-01-31', endDate: '2024-03-01', timeBucket: 'month' }).buckets).toBe(3);
    expect(resolve({ startDate: '2026-12-31', endDate: '2027-01-01', timeBucket: 'month' }).buckets).toBe(2);
    expect(resolve({ startDate: '0099-11-15', endDate: '0100-02-01', timeBucket: 'month' }).buckets).toBe(4);
    // Weeks before 1970 start on Mondays too.
    expect(resolve({ startDate: '1969-12-28', endDate: '1969-12-29', timeBucket: 'week' }).buckets).toBe(2);
  });
});

describe('bucketIsoStrings', () => {
  it('writes whole hours exactly as toISOString does, before 1970 and in year 1 too', () => {
    const starts = [
      Date.UTC(2025, 0, 1),
      Date.UTC(2024, 1, 29, 23),
      Date.UTC(2024, 2, 1, 9),
      Date.UTC(1969, 11, 31, 23),
      -62135596800000 + 5 * 3_600_000,
    ];
    for (let h = 0; h < 50; h++) starts.push(Date.UTC(2026, 11, 31, h));
    expect(bucketIsoStrings(starts)).toEqual(starts.map((ms) => new Date(ms).toISOString()));
  });
});

describe('resolveRange in a time zone', () => {
  const now = new Date('2026-03-29T22:30:00Z'); // already 30 March in Paris
  const starts = (query: Parameters<typeof resolveRange>[0]) => resolveRange(query, now).buckets.map((ms) => new Date(ms).toISOString());

  it('defaults to the 30 local days ending with the local today', () => {
    const range = resolveRange({ timeBucket: 'day', timezone: 'Europe/Paris' }, now);
    expect([range.start.toISOString(), range.end.toISOString(), range.buckets.length]).toEqual([
      '2026-02-28T23:00:00.000Z',
      '2026-03-30T22:00:00.000Z',
      30,
    ]);
  });

  it('gives days of 23 and 25 hours around the DST changes, and local midnights on the far side of the date line', () => {
    expect(starts({ timeBucket: 'day', timezone: 'Europe/Paris', startDate: '2026-03-29', endDate: '2026-03-30' })).toEqual([
      '2026-03-28T23:00:00.000Z',
      '2026-03-29T22:00:00.000Z',
    ]);
    expect(starts({ timeBucket: 'day', timezone: 'America/New_York', startDate: '2026-11-01', endDate: '2026-11-02' })).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-11-02T05:00:00.000Z',
    ]);
    expect(starts({ timeBucket: 'month', timezone: 'Pacific/Auckland', startDate: '2026-01-15', endDate: '2026-02-01' })).toEqual([
      '2025-12-31T11:00:00.000Z',
      '2026-01-31T11:00:00.000Z',
    ]);
  });

  it('refuses zones off the whole hour, for hours as well as days', () => {
    for (const timeBucket of ['hour', 'day'] as const) {
      expect(() => resolveRange({ timeBucket, timezone: 'Asia/Kathmandu', startDate: '2026-03-01', endDate: '2026-03-01' }, now)).toThrow(
        /Asia\/Kathmandu is UTC\+05:45/,
      );
    }
  });
});

describe('contentDisposition', () => {
  it('sends ASCII names as they are, and others with an ASCII fallback and the exact UTF-8 name', () => {
    expect(contentDisposition('analytics-spring-2026-03-01-to-2026-03-31-day-wide.csv')).toBe(
      'attachment; filename="analytics-spring-2026-03-01-to-2026-03-31-day-wide.csv"',
    );
    expect(contentDisposition('analytics-Ete "promo" (l\'an)\r\n.csv')).toBe(
      'attachment; filename="analytics-Ete_promo_l_an_.csv"; filename*=UTF-8\'\'analytics-Ete%20%22promo%22%20%28l%27an%29%0D%0A.csv',
    );
  });
});
