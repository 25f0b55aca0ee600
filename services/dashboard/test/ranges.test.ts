import { describe, expect, it } from 'vitest';
import {
  allowedBuckets,
  defaultBucket,
  defaultTimeZone,
  isWholeHourZone,
  PRESETS,
  rangeQuery,
  reportTimeZones,
  resolveRange,
} from '../src/lib/ranges.js';

const now = new Date('2026-11-24T11:20:30.000Z');

describe('range presets', () => {
  it('end with the current hour included and reach back their length', () => {
    const day = resolveRange('24h', now);
    expect(day.endDate.toISOString()).toBe('2026-11-24T12:00:00.000Z');
    expect(day.startDate.toISOString()).toBe('2026-11-23T12:00:00.000Z');
    const year = resolveRange('1y', now);
    expect((year.endDate.getTime() - year.startDate.getTime()) / 3_600_000).toBe(8760);
  });

  it('go to the API with the last included instant as endDate (the API includes a date-time endDate), a custom range as its dates', () => {
    const range = resolveRange('24h', now);
    expect(rangeQuery(range, 'Europe/Paris')).toEqual({
      startDate: range.startDate,
      endDate: new Date('2026-11-24T11:59:59.999Z'),
      timezone: 'Europe/Paris',
    });
    const custom = { from: '2026-03-01', to: '2026-03-31' };
    expect(rangeQuery(resolveRange('custom', now, custom), 'UTC', custom)).toEqual({
      startDate: '2026-03-01',
      endDate: '2026-03-31',
      timezone: 'UTC',
    });
  });

  it('at the turn of an hour still include the hour that just began', () => {
    expect(resolveRange('7d', new Date('2026-11-24T11:00:00.000Z')).endDate.toISOString()).toBe('2026-11-24T12:00:00.000Z');
  });

  it('have sensible default buckets: hours for a day or a week, days beyond', () => {
    expect(PRESETS.map((preset) => [preset.id, defaultBucket(preset.id, resolveRange(preset.id, now))])).toEqual([
      ['24h', 'hour'],
      ['7d', 'hour'],
      ['30d', 'day'],
      ['90d', 'day'],
      ['1y', 'day'],
    ]);
  });

  it('offer only buckets within the API limit that give at least two points', () => {
    expect(allowedBuckets(resolveRange('24h', now))).toEqual(['hour']);
    expect(allowedBuckets(resolveRange('30d', now))).toEqual(['hour', 'day', 'week']);
    expect(allowedBuckets(resolveRange('1y', now))).toEqual(['hour', 'day', 'week', 'month']);
  });

  it('take a custom range from the start of its first day to the end of its last, in local time', () => {
    const range = resolveRange('custom', now, { from: '2026-03-01', to: '2026-03-31' });
    expect(range.startDate).toEqual(new Date(2026, 2, 1));
    expect(range.endDate).toEqual(new Date(2026, 3, 1));
    expect(defaultBucket('custom', range)).toBe('day');
    expect(defaultBucket('custom', resolveRange('custom', now, { from: '2026-03-01', to: '2026-03-02' }))).toBe('hour');
    const long = resolveRange('custom', now, { from: '2020-01-01', to: '2026-01-01' });
    expect(defaultBucket('custom', long)).toBe('week');
    expect(allowedBuckets(long)).not.toContain('hour');
    expect(() => resolveRange('custom', now)).toThrow(/both dates/);
  });
});

describe('time zones', () => {
  it('offers zones a whole number of hours from UTC, UTC first', () => {
    expect(isWholeHourZone('Europe/Paris', now)).toBe(true);
    expect(isWholeHourZone('Asia/Kolkata', now)).toBe(false);
    expect(isWholeHourZone('UTC', now)).toBe(true);
    const zones = reportTimeZones(now, ['America/New_York', 'Asia/Kolkata', 'UTC', 'Asia/Tokyo']);
    expect(zones).toEqual(['UTC', 'America/New_York', 'Asia/Tokyo']);
  });

  it("defaults to the browser's zone when the API can report in it, else UTC", () => {
    expect(defaultTimeZone(now, 'America/New_York')).toBe('America/New_York');
    expect(defaultTimeZone(now, 'Asia/Kolkata')).toBe('UTC');
  });
});
