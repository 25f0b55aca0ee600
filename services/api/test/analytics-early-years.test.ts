// Ranges reach back to the year 1, and PostgreSQL's text of such early timestamps is not
// something `new Date` reads (years before 100 come back as 19xx or 20xx, some not at all).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestamp } from '@deeplink/core/db';
import { type ApiHarness, createApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api?.close());

describe('the earliest years', () => {
  it('reads PostgreSQL timestamps of any year exactly', () => {
    expect(parseTimestamp('0001-01-01 00:00:00+00').toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseTimestamp('0834-04-01 00:00:00+00').toISOString()).toBe('0834-04-01T00:00:00.000Z');
    expect(parseTimestamp('2026-11-25 03:50:07.123456+00').toISOString()).toBe('2026-11-25T03:50:07.123Z');
    expect(parseTimestamp('2026-03-29 03:00:00+02').toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(parseTimestamp('1883-11-18 11:00:00-04:56:02').toISOString()).toBe('1883-11-18T15:56:02.000Z');
  });

  it('reads the common UTC shape on its fast path exactly as any other, fractions of any length included', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.integer({ min: 0, max: 6 }),
        (date, micros, digits) => {
          const fraction = digits === 0 ? '' : `.${String(micros).padStart(6, '0').slice(0, digits)}`;
          const text = `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 19)}${fraction}+00`;
          const ms = digits === 0 ? 0 : Math.floor(Number(`0${fraction}`) * 1000);
          expect(parseTimestamp(text).getTime()).toBe(
            Date.UTC(
              date.getUTCFullYear(),
              date.getUTCMonth(),
              date.getUTCDate(),
              date.getUTCHours(),
              date.getUTCMinutes(),
              date.getUTCSeconds(),
              ms,
            ),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('exports an account from the year 1 with every bucket dated as asked, never a 500', async () => {
    const { token } = await api.registerUser();
    await api.request({ method: 'POST', url: '/api/links', token, payload: { title: 'Old', defaultUrl: 'https://example.com' } });
    const response = await api.request({
      method: 'GET',
      url: '/api/analytics/export?startDate=0001-01-01&endDate=0001-12-31T23:59:59.999Z&timeBucket=month&format=json',
      token,
    });
    expect(response.statusCode).toBe(200);
    const buckets = [...new Set((response.json() as { bucket: string }[]).map((row) => row.bucket))];
    expect(buckets[0]).toBe('0001-01-01T00:00:00.000Z');
    expect(buckets).toHaveLength(12);
  });
});
