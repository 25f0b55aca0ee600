import { describe, expect, it } from 'vitest';
import { readReportView, type ReportView, withQuery, writeReportView } from '../src/lib/report-view.js';

const now = new Date('2026-11-24T11:20:30.000Z');
const zones = ['UTC', 'Europe/Paris', 'Asia/Tokyo'];
const read = (search: string) => readReportView(new URLSearchParams(search), now, zones, 'Europe/Paris');
const write = (view: ReportView) => writeReportView(view, now, 'Europe/Paris').toString();

describe("a report page's address", () => {
  it('is empty for the default view: the last 30 days by day, in the browser zone, unfiltered', () => {
    const view = read('');
    expect(view).toMatchObject({ preset: '30d', bucket: 'day', timeZone: 'Europe/Paris', filters: [] });
    expect(write(view)).toBe('');
  });

  it('holds the range, bucket, zone and filters, and reads back the same view', () => {
    const view: ReportView = {
      ...read(''),
      preset: '7d',
      bucket: 'day',
      timeZone: 'Asia/Tokyo',
      filters: [
        { dimension: 'country', value: 'DE', exclude: false },
        { dimension: 'browser', value: 'Mobile Safari', exclude: true },
      ],
    };
    const search = write(view);
    expect(search).toBe('range=7d&bucket=day&tz=Asia%2FTokyo&country=DE&notBrowser=Mobile+Safari');
    expect(read(search)).toEqual(view);
  });

  it("leaves out a bucket that is the preset's own", () => {
    expect(write({ ...read(''), preset: '24h', bucket: 'hour' })).toBe('range=24h');
    expect(read('range=24h').bucket).toBe('hour');
  });

  it('keeps a custom range as its two days', () => {
    const view = read('range=custom&from=2026-10-01&to=2026-10-31');
    expect(view.custom).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(write(view)).toBe('range=custom&from=2026-10-01&to=2026-10-31');
  });

  it('falls back to the defaults for what it cannot read', () => {
    const view = read('range=2y&bucket=minute&tz=Asia/Kolkata&from=2026-10-31&to=2026-10-01');
    expect(view).toMatchObject({ preset: '30d', bucket: 'day', timeZone: 'Europe/Paris' });
    expect(read('range=custom&from=yesterday&to=2026-10-01').custom.to).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  it('is written after its path only when there is one', () => {
    expect(withQuery('/links/abc', new URLSearchParams())).toBe('/links/abc');
    expect(withQuery('/links/abc', new URLSearchParams('country=DE'))).toBe('/links/abc?country=DE');
  });
});
