// The unique counts of an app's events, end to end (real PostgreSQL, Redis, BullMQ and the worker):
// POST /app/install and POST /app/open queue their events, the worker rolls them up, and the link
// report's appEvents.uniques counts each install once however often it installs, retries or
// re-opens; an open that names no install counts as itself.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { CLICK_QUEUE, INSTALL_TOKEN_PARAM } from '@deeplink/core';
import { rollupsRepository } from '@deeplink/core/db';
import { waitForIdle } from '@deeplink/test-kit/clicks';
import { UA } from '@deeplink/test-kit/user-agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type ClickWorker } from '../../worker/src/app.js';
import { createApiHarness, createLinkOf, type ApiHarness } from './harness.js';
import { storeVisit } from './install-clicks.js';

const PACKAGE = 'com.example.uniques';
const NONE = { ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0 };

let api: ApiHarness;
let owner: { token: string };
let appKey: string;
let queue: Queue;
let worker: ClickWorker;

beforeAll(async () => {
  api = await createApiHarness();
  queue = new Queue(CLICK_QUEUE, { connection: api.env.redis, prefix: api.env.config.QUEUE_PREFIX });
  owner = await api.registerUser('Owner');
  const created = await api.request({
    method: 'POST',
    url: '/api/apps',
    token: owner.token,
    payload: { platform: 'android', packageName: PACKAGE, sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
  });
  expect(created.statusCode, created.body).toBe(201);
  appKey = created.json().data.app.key;
  worker = await createWorker({ config: api.env.config, sql: api.env.sql, redis: api.env.redis, schedule: false });
});
afterAll(async () => {
  await worker?.close();
  await queue?.close();
  await api?.close();
});

const androidLink = () => createLinkOf(api, owner.token, { androidLink: { url: 'shop://spring', appPackageName: PACKAGE } });

/** A store visit to `linkId` as the worker stores it; returns the Play referrer that carries its token. */
const storeReferrer = async (linkId: string) => {
  const token = await storeVisit(api.env.sql, api.env.config.VISITOR_SALT, {
    linkId,
    platform: 'ANDROID',
    ip: '203.0.113.7',
    userAgent: UA.androidChrome,
    clickedAt: Date.now() - 60_000,
  });
  return `utm_source=google-play&${INSTALL_TOKEN_PARAM}=${token}`;
};

const install = (payload: Record<string, unknown>) =>
  api.request({ method: 'POST', url: '/api/app/install', headers: { 'x-app-key': appKey }, payload });
const open = (payload: Record<string, unknown>) =>
  api.request({ method: 'POST', url: '/api/app/open', headers: { 'x-app-key': appKey }, payload });

/** The link's app events, counts and uniques, once the worker has rolled up everything queued. */
async function appEvents(linkId: string) {
  await waitForIdle(queue);
  const response = await api.request({ method: 'GET', url: `/api/analytics/links/${linkId}`, token: owner.token });
  expect(response.statusCode, response.body).toBe(200);
  const { counts, uniques } = response.json().data.analytics.appEvents;
  return { counts, uniques };
}

describe('unique installs', () => {
  it('counts an install once however often it asks, even counted again after its event ids were pruned; a reinstall is another', async () => {
    const link = await androidLink();
    const referrer = await storeReferrer(link.id);
    const installId = randomUUID();
    // The first launch and its retry: one install in the counts and in the uniques.
    for (let i = 0; i < 2; i++) expect((await install({ installId, referrer })).json().data.match?.link.id).toBe(link.id);
    let events = await appEvents(link.id);
    expect([events.counts.APP_INSTALL, events.uniques.APP_INSTALL]).toEqual([
      { ...NONE, ANDROID: 1 },
      { ...NONE, ANDROID: 1 },
    ]);

    // The event ids are kept for BATCH_RETENTION_DAYS: a retry after that counts again, the install does not.
    await rollupsRepository(api.env.sql).pruneProcessedBatches(new Date(Date.now() + 60_000));
    expect((await install({ installId, referrer })).json().data.match?.link.id).toBe(link.id);
    events = await appEvents(link.id);
    expect([events.counts.APP_INSTALL.ANDROID, events.uniques.APP_INSTALL.ANDROID]).toEqual([2, 1]);
    expect([events.counts.APP_FIRST_OPEN.ANDROID, events.uniques.APP_FIRST_OPEN.ANDROID]).toEqual([2, 1]);

    // Deleted and installed again through another visit: a new installId, another install.
    const again = await storeReferrer(link.id);
    expect((await install({ installId: randomUUID(), referrer: again })).json().data.match?.link.id).toBe(link.id);
    events = await appEvents(link.id);
    expect([events.counts.APP_INSTALL.ANDROID, events.uniques.APP_INSTALL.ANDROID]).toEqual([3, 2]);
    expect(events.uniques.APP_RE_OPEN).toEqual(NONE);
  });
});

describe('unique opens', () => {
  it('counts the re-opens of one install once when they name it, and each open as one when they name none', async () => {
    const link = await androidLink();
    const installId = randomUUID();
    // Three re-opens of one install, the second retried with its openId.
    for (const openId of ['reopen-0001', 'reopen-0002', 'reopen-0002', 'reopen-0003']) {
      expect((await open({ url: link.url, openId, installId })).statusCode).toBe(200);
    }
    let events = await appEvents(link.id);
    expect([events.counts.APP_RE_OPEN, events.uniques.APP_RE_OPEN]).toEqual([
      { ...NONE, ANDROID: 3 },
      { ...NONE, ANDROID: 1 },
    ]);

    // Opens that name no install: each counts as itself (by its openId, or as a fresh open without one).
    for (const payload of [{ openId: 'other-0001' }, { openId: 'other-0001' }, { openId: 'other-0002' }, {}]) {
      expect((await open({ url: link.url, ...payload })).statusCode).toBe(200);
    }
    // The first launch of the same install, told by /app/open: one install among the first opens.
    expect((await open({ url: link.url, openId: 'first-0001', installId, firstLaunch: true })).statusCode).toBe(200);
    events = await appEvents(link.id);
    expect([events.counts.APP_RE_OPEN.ANDROID, events.uniques.APP_RE_OPEN.ANDROID]).toEqual([6, 4]);
    expect([events.counts.APP_FIRST_OPEN.ANDROID, events.uniques.APP_FIRST_OPEN.ANDROID]).toEqual([1, 1]);

    // The same install re-opening through another link of the account: one install in the summary's uniques.
    const other = await androidLink();
    expect((await open({ url: other.url, openId: 'reopen-0004', installId })).statusCode).toBe(200);
    await waitForIdle(queue);
    const summary = (await api.request({ method: 'GET', url: '/api/analytics/summary?breakdowns=true', token: owner.token })).json().data
      .summary.appEvents;
    expect([summary.counts.APP_RE_OPEN.ANDROID, summary.uniques.APP_RE_OPEN.ANDROID]).toEqual([7, 4]);
  });

  it('refuses a malformed installId with 400 naming it, and counts nothing', async () => {
    const link = await androidLink();
    for (const installId of ['short', 'has spaces in it', 'x'.repeat(65), 42]) {
      const response = await open({ url: link.url, openId: 'bad-install-0001', installId });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
      expect(response.json().error.details.map((detail: { field: string }) => detail.field)).toContain('installId');
    }
    expect((await appEvents(link.id)).counts.APP_RE_OPEN).toEqual(NONE);
  });
});
