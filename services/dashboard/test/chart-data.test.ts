import { describe, expect, it } from 'vitest';
import { accountDailyClicks, breakdownRows, bucketLabel, countryName, seriesData } from '../src/lib/chart-data.js';

describe('chart data', () => {
  it('turns the time series into uPlot columns: Unix seconds, clicks and unique clicks', () => {
    const [xs, ys, unique] = seriesData([
      { date: '2026-01-01T00:00:00.000Z', clicks: 3, uniqueClicks: 2 },
      { date: '2026-01-01T01:00:00.000Z', clicks: 0, uniqueClicks: 0 },
    ]);
    expect([...xs]).toEqual([1767225600, 1767229200]);
    expect([...ys]).toEqual([3, 0]);
    expect([...unique]).toEqual([2, 0]);
  });

  it('shapes a year by hour (8,760 points) without loss', () => {
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    const points = Array.from({ length: 8760 }, (_, hour) => ({
      date: new Date(start + hour * 3_600_000).toISOString(),
      clicks: hour % 7,
    }));
    const [xs, ys] = seriesData(points);
    expect(xs.length).toBe(8760);
    expect(xs[8759]! - xs[0]!).toBe(8759 * 3600);
    expect(ys.reduce((sum, clicks) => sum + clicks, 0)).toBe(points.reduce((sum, point) => sum + point.clicks, 0));
  });

  it("adds the account export's rows (one per link and day) up by day, in order", () => {
    expect(
      accountDailyClicks([
        { bucket_start: '2026-03-02T23:00:00.000Z', clicks: 4 },
        { bucket_start: '2026-03-01T23:00:00.000Z', clicks: 1 },
        { bucket_start: '2026-03-02T23:00:00.000Z', clicks: 2 },
        { bucket_start: '2026-03-01T23:00:00.000Z', clicks: 0 },
      ]),
    ).toEqual([
      { date: '2026-03-01T23:00:00.000Z', clicks: 1 },
      { date: '2026-03-02T23:00:00.000Z', clicks: 6 },
    ]);
    expect(accountDailyClicks([])).toEqual([]);
  });

  it('orders breakdown rows largest first, catch-alls last, with shares and readable labels', () => {
    const rows = breakdownRows({ Other: 50, US: 20, DE: 30, Unknown: 5, FR: 20 }, countryName);
    expect(rows.map((row) => row.key)).toEqual(['DE', 'FR', 'US', 'Other', 'Unknown']);
    expect(rows[0]).toEqual({ key: 'DE', label: 'Germany (DE)', clicks: 30, share: 30 / 125 });
    expect(rows.find((row) => row.key === 'Other')!.label).toBe('Other');
    expect(breakdownRows({ android: 0 })).toEqual([{ key: 'android', label: 'android', clicks: 0, share: 0 }]);
  });

  it('names countries and platforms', () => {
    expect(countryName('JP')).toBe('Japan (JP)');
    expect(countryName('Unknown')).toBe('Unknown');
  });

  it('labels buckets by their grain', () => {
    expect(bucketLabel('2026-03-05T14:00:00.000Z', 'hour', 'UTC')).toBe('Mar 5, 2026, 14:00');
    expect(bucketLabel('2026-03-05T00:00:00.000Z', 'day', 'UTC')).toBe('Mar 5, 2026');
    expect(bucketLabel('2026-03-01T00:00:00.000Z', 'month', 'UTC')).toBe('March 2026');
  });
});
