import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANDROID_CHROME, IPHONE_SAFARI, recordClicks, rollupClick as click } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;

beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(async () => {
  await api?.close();
});

describe('GET /analytics/summary with tag and range', () => {
  let token: string;
  const ids: Record<string, string> = {};
  const summary = async (query: Record<string, string> = {}, as = token) => {
    const response = await api.request({ method: 'GET', url: `/api/analytics/summary?${new URLSearchParams(query)}`, token: as });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.summary;
  };

  beforeAll(async () => {
    ({ token } = await api.registerUser('Campaigns'));
    const create = async (title: string, tags: string[], expirationDate?: string) => {
      const response = await api.request({
        method: 'POST',
        url: '/api/links',
        token,
        payload: { title, defaultUrl: 'https://example.com', tags, ...(expirationDate && { expirationDate }) },
      });
      ids[title] = response.json().data.link.id;
    };
    await create('Spring email', ['spring', 'email']);
    await create('Spring ad', ['spring'], '2020-01-01');
    await create('Winter email', ['winter', 'email']);
    await recordClicks(api.env.sql, [
      click(ids['Spring email']!, '2026-03-01T10:00:00Z', IPHONE_SAFARI),
      click(ids['Spring email']!, '2026-03-02T10:00:00Z', { ...ANDROID_CHROME, country: 'DE' }),
      click(ids['Spring ad']!, '2026-03-01T23:30:00Z'), // 2 March in Paris
      click(ids['Winter email']!, '2026-01-05T10:00:00Z'),
      click(ids['Winter email']!, '2026-01-06T10:00:00Z'),
      click(ids['Winter email']!, '2026-01-07T10:00:00Z'),
    ]);
  });

  it('sums only the links carrying the tag', async () => {
    expect(await summary({ tag: 'spring', breakdowns: 'true' })).toEqual({
      totalLinks: 2,
      activeLinks: 1,
      totalClicks: 3,
      topLinks: [
        { id: ids['Spring email'], title: 'Spring email', clicks: 2 },
        { id: ids['Spring ad'], title: 'Spring ad', clicks: 1 },
      ],
      // The breakdowns cover the same clicks: the tag's links only.
      platforms: { android: 1, ios: 1, desktop: 1 },
      countries: { US: 2, DE: 1 },
      browsers: { Chrome: 2, 'Mobile Safari': 1 },
      os: { Android: 1, iOS: 1, Windows: 1 },
      devices: { Mobile: 2, Desktop: 1 },
      referrers: { direct: 3 },
      // Clicks per platform in the app funnel too; no app events.
      appEvents: expect.objectContaining({
        counts: expect.objectContaining({ CLICK: { ANDROID: 1, IOS: 1, DESKTOP: 1, OTHER: 0 } }),
        conversion: expect.objectContaining({ redirectPerClick: 0 }),
      }),
      appEventsFiltered: true,
    });
    expect((await summary({ tag: 'Email' })).totalClicks).toBe(5);
    expect(await summary({ tag: 'autumn' })).toEqual({
      totalLinks: 0,
      activeLinks: 0,
      totalClicks: 0,
      topLinks: [],
      appEventsFiltered: true,
    });
    expect((await summary({ tag: 'autumn', breakdowns: 'true' })).os).toEqual({});
    // Without filters: SPEC's all-time summary of every link.
    expect((await summary()).totalClicks).toBe(6);
    // A misspelt filter is refused, never answered with the whole account.
    const typo = await api.request({ method: 'GET', url: '/api/analytics/summary?tags=spring', token });
    expect(typo.statusCode).toBe(400);
    expect(typo.json().error.details).toEqual([{ field: 'tags', message: 'is not a query parameter of this operation' }]);
  });

  it('counts the clicks of a range, its bare dates read in the time zone', async () => {
    const first = await summary({ startDate: '2026-03-01', endDate: '2026-03-01', breakdowns: 'true' });
    expect(first.totalClicks).toBe(2);
    // The range's clicks only, in every breakdown: the iPhone's of 1 March and the ad's Windows click, not the Android one of 2 March.
    expect(first.os).toEqual({ iOS: 1, Windows: 1 });
    expect(first.platforms).toEqual({ android: 0, ios: 1, desktop: 1 });
    const paris = await summary({ startDate: '2026-03-02', endDate: '2026-03-02', timezone: 'Europe/Paris', breakdowns: 'true' });
    expect(paris.totalClicks).toBe(2);
    expect(paris.topLinks.map((link: { title: string }) => link.title)).toEqual(['Spring ad', 'Spring email']);
    expect(paris.os).toEqual({ Android: 1, Windows: 1 });
    expect((await summary({ tag: 'winter', startDate: '2026-01-06', endDate: '2026-03-31' })).totalClicks).toBe(2);
  });

  it("never shows another account's links, and refuses bad filters", async () => {
    const other = await api.registerUser('Other');
    expect((await summary({ tag: 'spring' }, other.token)).totalLinks).toBe(0);
    const bad = await api.request({ method: 'GET', url: '/api/analytics/summary?tag=no%20spaces', token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].field).toBe('tag');
    const kolkata = await api.request({ method: 'GET', url: '/api/analytics/summary?startDate=2026-03-01&timezone=Asia/Kolkata', token });
    expect(kolkata.statusCode).toBe(400);
    expect(kolkata.json().error.details[0].field).toBe('timezone');
    const yes = await api.request({ method: 'GET', url: '/api/analytics/summary?breakdowns=yes', token });
    expect(yes.statusCode).toBe(400);
    expect(yes.json().error.details).toEqual([{ field: 'breakdowns', message: 'must be true or false' }]);
  });
});
