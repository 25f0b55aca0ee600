// Install attribution over the API (real PostgreSQL, Redis, BullMQ): POST /app/install claims the
// store visit its token names (Play referrer, then pasteboard) once, for one install, or, when the
// app's owner turned it on, the one visit on its network that clearly fits its device facts. The
// visits are written as the worker writes them (install-clicks.ts); the clock is the test's.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { CLICK_QUEUE, hashInstallToken, INSTALL_TOKEN_PARAM, readClickJob } from '@deeplink/core';
import { waitForIdle } from '@deeplink/test-kit/clicks';
import { UA } from '@deeplink/test-kit/user-agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../worker/src/app.js';
import { installEventIds } from '../src/domain/app-open-events.js';
import { createApiHarness, createLinkOf, type ApiHarness } from './harness.js';
import { storeVisit, type StoreVisit } from './install-clicks.js';

const MINUTE = 60_000;
const PACKAGE = 'com.example.installs';
const BUNDLE = 'com.example.installs';
const FINGERPRINT = Array(32).fill('AB').join(':');

let api: ApiHarness;
/** The API's clock for the install match; tests move it. */
let clock = Date.now();
let owner: { token: string };
let android: { id: string; key: string };
let ios: { id: string; key: string };
let queue: Queue;

beforeAll(async () => {
  api = await createApiHarness({ now: () => clock });
  queue = new Queue(CLICK_QUEUE, { connection: api.env.redis, prefix: api.env.config.QUEUE_PREFIX });
  owner = await api.registerUser('Owner');
  android = await createApp(owner.token, { platform: 'android', packageName: PACKAGE, sha256CertFingerprints: [FINGERPRINT] });
  ios = await createApp(owner.token, { platform: 'ios', teamId: 'ABCDE12345', bundleId: BUNDLE, appStoreId: '1234567890' });
});
afterAll(async () => {
  await queue?.close();
  await api?.close();
});

async function createApp(token: string, payload: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const response = await api.request({ method: 'POST', url: '/api/apps', token, payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.app;
}

const createLink = (token: string, fields: Record<string, unknown>) => createLinkOf(api, token, fields);

const androidLink = (token = owner.token, packageName = PACKAGE) =>
  createLink(token, { androidLink: { url: 'shop://spring', appPackageName: packageName }, customParameters: { utm_source: 'ads' } });
const iosLink = (token = owner.token) => createLink(token, { iosLink: { url: 'shop://spring', bundleId: BUNDLE, minimumVersion: '2.4' } });

const visit = (fields: Partial<StoreVisit> & Pick<StoreVisit, 'linkId'>) =>
  storeVisit(api.env.sql, api.env.config.VISITOR_SALT, {
    platform: 'ANDROID',
    ip: '203.0.113.7',
    userAgent: UA.androidChrome,
    acceptLanguage: 'fr-FR,fr;q=0.9',
    clickedAt: clock - 10 * MINUTE,
    ...fields,
  });

const install = (key: string, payload: unknown, remoteAddress = '198.51.100.1') =>
  api.request({ method: 'POST', url: '/api/app/install', headers: { 'x-app-key': key }, payload: payload as object, remoteAddress });

/** A Play install referrer as InstallReferrerClient hands it over. */
const referrerWith = (token: string) => `utm_source=google-play&utm_medium=cpc&${INSTALL_TOKEN_PARAM}=${token}`;

const claimedBy = async (token: string) => {
  const [row] = await api.env.sql<{ claimed_by: Buffer | null }[]>`
    SELECT claimed_by FROM install_clicks WHERE token_hash = ${hashInstallToken(token)}`;
  return row?.claimed_by ?? null;
};

describe('POST /app/install: tokens', () => {
  it("claims the visit the Play referrer's token names and answers its link, the same again for the same install", async () => {
    const link = await androidLink();
    const token = await visit({ linkId: link.id });
    const installId = randomUUID();
    const first = await install(android.key, { installId, referrer: referrerWith(token) });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data).toEqual({
      match: {
        link: { id: link.id, code: link.code, url: link.url },
        deepLink: 'shop://spring',
        parameters: { utm_source: 'ads' },
        webUrl: 'https://shop.example.com/spring?utm_source=ads',
        matchedBy: 'install-referrer',
      },
    });
    expect(first.headers['access-control-allow-origin']).toBe('*');
    const preflight = await api.request({ method: 'OPTIONS', url: '/api/app/install' });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toBe('content-type, x-app-key');
    const retry = await install(android.key, { installId, referrer: referrerWith(token) });
    expect(retry.json()).toEqual(first.json());
    // The referrer as the Play Store URL carries it: URL-encoded once.
    const encoded = await install(android.key, { installId, referrer: encodeURIComponent(referrerWith(token)) });
    expect(encoded.json().data.match?.link.id).toBe(link.id);
  });

  it('gives a token to one install only: another install gets no match', async () => {
    const link = await androidLink();
    const token = await visit({ linkId: link.id });
    expect((await install(android.key, { installId: randomUUID(), referrer: referrerWith(token) })).json().data.match).not.toBeNull();
    const other = await install(android.key, { installId: randomUUID(), referrer: referrerWith(token) });
    expect(other.statusCode).toBe(200);
    expect(other.json()).toEqual({ success: true, data: { match: null } });
  });

  it("claims the pasteboard URL's token on iOS, after a referrer that holds none", async () => {
    const link = await iosLink();
    const token = await visit({ linkId: link.id, platform: 'IOS', userAgent: UA.iphoneSafari });
    const response = await install(ios.key, {
      installId: randomUUID(),
      referrer: 'utm_source=(not%20set)',
      pasteboard: `${link.url}?${INSTALL_TOKEN_PARAM}=${token}`,
    });
    expect(response.json().data.match).toMatchObject({
      link: { id: link.id },
      deepLink: 'shop://spring',
      minimumVersion: '2.4',
      matchedBy: 'pasteboard',
    });
  });

  it('tries the referrer before the pasteboard', async () => {
    const [first, second] = [await androidLink(), await androidLink()];
    const referred = await visit({ linkId: first.id });
    const pasted = await visit({ linkId: second.id });
    const response = await install(android.key, {
      installId: randomUUID(),
      referrer: referrerWith(referred),
      pasteboard: `x?dl_token=${pasted}`,
    });
    expect(response.json().data.match).toMatchObject({ link: { id: first.id }, matchedBy: 'install-referrer' });
    expect(await claimedBy(pasted)).toBeNull();
  });

  it("answers no match, and claims nothing, for an expired token, another account's link, a link for another app, or an unknown token", async () => {
    const mine = await androidLink();
    const expired = await visit({ linkId: mine.id, clickedAt: clock - 91 * 24 * 60 * MINUTE, expiresAt: clock - MINUTE });
    const stranger = await api.registerUser('Stranger');
    const theirs = await visit({ linkId: (await androidLink(stranger.token)).id });
    const otherApp = await visit({ linkId: (await androidLink(owner.token, 'com.example.another')).id });
    // An iOS visit's token handed to the Android app.
    const iosVisit = await visit({ linkId: (await iosLink()).id, platform: 'IOS', userAgent: UA.iphoneSafari });
    const unknown = 'A'.repeat(22);
    for (const token of [expired, theirs, otherApp, iosVisit, unknown]) {
      const response = await install(android.key, { installId: randomUUID(), referrer: referrerWith(token) });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ success: true, data: { match: null } });
    }
    for (const token of [expired, theirs, otherApp, iosVisit]) expect(await claimedBy(token)).toBeNull();
  });

  it('answers no match for an expired link, and nothing without a token', async () => {
    const link = await createLink(owner.token, {
      androidLink: { url: 'shop://gone', appPackageName: PACKAGE },
      expirationDate: new Date(clock + 60 * MINUTE).toISOString(),
    });
    const token = await visit({ linkId: link.id });
    clock += 120 * MINUTE;
    try {
      expect((await install(android.key, { installId: randomUUID(), referrer: referrerWith(token) })).json().data.match).toBeNull();
    } finally {
      clock -= 120 * MINUTE;
    }
    expect(
      (await install(android.key, { installId: randomUUID(), referrer: 'utm_source=google-play&utm_medium=organic' })).json().data,
    ).toEqual({ match: null });
  });

  it('queues APP_INSTALL and APP_FIRST_OPEN for the link with ids from the app and installId, the same on every retry', async () => {
    const link = await androidLink();
    const token = await visit({ linkId: link.id });
    const installId = randomUUID();
    await queue.drain();
    for (let i = 0; i < 3; i++) expect((await install(android.key, { installId, referrer: referrerWith(token) })).statusCode).toBe(200);
    const events = (await queue.getJobs(['waiting'])).flatMap((job) => readClickJob(job.data)?.appEvents ?? []);
    const ids = installEventIds(android.id, installId);
    expect(events).toHaveLength(6);
    expect(new Set(events.map((event) => `${event.eventId} ${event.name} ${event.platform} ${event.linkId}`))).toEqual(
      new Set([`${ids.install} APP_INSTALL ANDROID ${link.id}`, `${ids.firstOpen} APP_FIRST_OPEN ANDROID ${link.id}`]),
    );
  });

  it('refuses a malformed body with 400 naming the field, and a missing key with 401', async () => {
    const short = await install(android.key, { installId: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.json().error.details).toEqual([expect.objectContaining({ field: 'installId' })]);
    const device = await install(android.key, {
      installId: randomUUID(),
      device: { osVersion: '14', deviceFamily: 'watch', language: 'fr' },
    });
    expect(device.statusCode).toBe(400);
    expect(device.json().error.details).toEqual([expect.objectContaining({ field: 'device.deviceFamily' })]);
    expect((await install(android.key, { installId: randomUUID(), referrer: 'x'.repeat(3000) })).statusCode).toBe(400);
    const keyless = await api.request({ method: 'POST', url: '/api/app/install', payload: { installId: randomUUID() } });
    expect(keyless.statusCode).toBe(401);
  });
});

describe('POST /app/install: the probabilistic match', () => {
  const device = { osVersion: '14', deviceFamily: 'phone', language: 'fr-FR', timeZone: 'Europe/Paris' } as const;
  /** The install's address: the visits below came from the same /24. */
  const SAME_NETWORK = '203.0.113.200';
  let fingerprinting: { id: string; key: string };
  let owner2: string;

  beforeAll(async () => {
    // An app of its own, so the other tests' visits are no candidates.
    const user = await api.registerUser('Fingerprinting');
    owner2 = user.token;
    fingerprinting = await createApp(user.token, {
      platform: 'android',
      packageName: 'com.example.fingerprint',
      sha256CertFingerprints: [FINGERPRINT],
    });
  });
  const link = () => androidLink(owner2, 'com.example.fingerprint');
  const setMatching = async (fields: Record<string, unknown>) => {
    const response = await api.request({ method: 'PATCH', url: `/api/apps/${fingerprinting.id}`, token: owner2, payload: fields });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.app;
  };

  it('is off by default: a visit that fits is not matched', async () => {
    const { id } = await link();
    const token = await visit({ linkId: id });
    const response = await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK);
    expect(response.json().data).toEqual({ match: null });
    expect(await claimedBy(token)).toBeNull();
    // Clear the visit for the next tests.
    await api.env.sql`DELETE FROM install_clicks WHERE link_id = ${id}`;
  });

  it('matches the one visit on the network that fits, inside the window only, and answers a retry the same', async () => {
    expect(await setMatching({ fingerprintMatching: true, fingerprintWindowMinutes: 60 })).toMatchObject({
      fingerprintMatching: true,
      fingerprintWindowMinutes: 60,
    });
    const { id } = await link();
    const token = await visit({ linkId: id, clickedAt: clock - 20 * MINUTE });

    // On another network: nothing.
    expect((await install(fingerprinting.key, { installId: randomUUID(), device }, '192.0.2.10')).json().data.match).toBeNull();
    // 61 minutes after the visit: outside the 60-minute window.
    clock += 41 * MINUTE + 1;
    expect((await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK)).json().data.match).toBeNull();
    clock -= 41 * MINUTE + 1;

    const installId = randomUUID();
    const matched = await install(fingerprinting.key, { installId, device }, SAME_NETWORK);
    const match = matched.json().data.match;
    expect(match).toMatchObject({ link: { id }, matchedBy: 'fingerprint' });
    // Android 14 and "14", a phone, French, a third of the window ago: 0.4 + 0.2 + 0.25 + 0.15 × 2/3.
    expect(match.confidence).toBeCloseTo(0.95, 3);
    expect(await claimedBy(token)).not.toBeNull();
    const retry = await install(fingerprinting.key, { installId, device }, SAME_NETWORK);
    expect(retry.json().data.match).toMatchObject({ link: { id }, matchedBy: 'fingerprint' });
    // Claimed: nobody else gets it.
    expect((await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK)).json().data.match).toBeNull();
  });

  it('answers no match when two visits fit about as well, and none for a tablet or too little agreement', async () => {
    await setMatching({ fingerprintMatching: true, fingerprintWindowMinutes: 120 });
    const { id } = await link();
    const close = [await visit({ linkId: id, clickedAt: clock - 5 * MINUTE }), await visit({ linkId: id, clickedAt: clock - 30 * MINUTE })];
    expect((await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK)).json().data.match).toBeNull();
    for (const token of close) expect(await claimedBy(token)).toBeNull();
    await api.env.sql`DELETE FROM install_clicks WHERE link_id = ${id}`;

    // One visit from a tablet: ruled out for a phone.
    await visit({ linkId: id, userAgent: UA.androidTablet, acceptLanguage: 'fr' });
    expect((await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK)).json().data.match).toBeNull();
    await api.env.sql`DELETE FROM install_clicks WHERE link_id = ${id}`;

    // Chrome's reduced agent says Android 10 whatever the device: the OS does not agree, which leaves too little.
    await visit({ linkId: id, userAgent: UA.androidReduced });
    expect((await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK)).json().data.match).toBeNull();
    await api.env.sql`DELETE FROM install_clicks WHERE link_id = ${id}`;

    // Two visits where the language tells them apart: the French one wins.
    await visit({ linkId: id, acceptLanguage: 'de-DE', clickedAt: clock - 2 * MINUTE });
    await visit({ linkId: id, acceptLanguage: 'fr-FR', clickedAt: clock - 20 * MINUTE });
    const response = await install(fingerprinting.key, { installId: randomUUID(), device }, SAME_NETWORK);
    expect(response.json().data.match).toMatchObject({ matchedBy: 'fingerprint' });
    expect(response.json().data.match.confidence).toBeGreaterThan(0.65);
    await setMatching({ fingerprintMatching: false });
  });

  it('keeps the settings within their bounds', async () => {
    const response = await api.request({
      method: 'PATCH',
      url: `/api/apps/${fingerprinting.id}`,
      token: owner2,
      payload: { fingerprintWindowMinutes: 2 },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'fingerprintWindowMinutes' })]);
    const stranger = await api.registerUser('Not the owner');
    const foreign = await api.request({
      method: 'PATCH',
      url: `/api/apps/${fingerprinting.id}`,
      token: stranger.token,
      payload: { fingerprintMatching: true },
    });
    expect(foreign.statusCode).toBe(403);
    const listed = (await api.request({ method: 'GET', url: '/api/apps', token: owner2 })).json().data.apps[0];
    expect(listed).toMatchObject({ fingerprintMatching: false, fingerprintWindowMinutes: 120 });
  });
});

describe('POST /app/install: failed token lookups', () => {
  let limited: ApiHarness;
  let key: string;
  beforeAll(async () => {
    // Three failed lookups per address; per key a tenth of APP_RATE_LIMIT_MAX, 4.
    limited = await createApiHarness({ env: { RATE_LIMIT_AUTH_MAX: '3', APP_RATE_LIMIT_MAX: '40' } });
    const user = await limited.registerUser('Prober');
    const response = await limited.request({
      method: 'POST',
      url: '/api/apps',
      token: user.token,
      payload: { platform: 'android', packageName: 'com.example.probed', sha256CertFingerprints: [FINGERPRINT] },
    });
    key = response.json().data.app.key;
  });
  afterAll(() => limited?.close());

  const probe = (remoteAddress: string, referrer = `${INSTALL_TOKEN_PARAM}=${randomUUID().replace(/-/g, '').slice(0, 22)}`) =>
    limited.request({
      method: 'POST',
      url: '/api/app/install',
      headers: { 'x-app-key': key },
      payload: { installId: randomUUID(), referrer },
      remoteAddress,
    });

  it('refuses token lookups from an address past its failures, and from anywhere once the key is past its own', async () => {
    // The budgets' windows follow the clock (a minute): start at the beginning of one.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 100));
    for (let i = 0; i < 3; i++) expect((await probe('192.0.2.1')).statusCode).toBe(200);
    const refused = await probe('192.0.2.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Without a token the address is still answered; another address still looks tokens up.
    expect((await probe('192.0.2.1', 'utm_source=google-play')).statusCode).toBe(200);
    expect((await probe('192.0.2.2')).statusCode).toBe(200);
    // That was the key's fourth failure: a fresh address is refused too.
    expect((await probe('192.0.2.3')).statusCode).toBe(429);
  });
});

describe('POST /app/install: counted by the worker', () => {
  it('counts APP_INSTALL and APP_FIRST_OPEN once however often the same install asks, and nothing without a match', async () => {
    const link = await androidLink();
    const token = await visit({ linkId: link.id });
    const installId = randomUUID();
    for (let i = 0; i < 3; i++) {
      expect((await install(android.key, { installId, referrer: referrerWith(token) })).json().data.match?.link.id).toBe(link.id);
    }
    expect((await install(android.key, { installId: randomUUID(), referrer: referrerWith(token) })).json().data.match).toBeNull();

    const worker = await createWorker({ config: api.env.config, sql: api.env.sql, redis: api.env.redis, schedule: false });
    try {
      const counts = async () => {
        const report = await api.request({ method: 'GET', url: `/api/analytics/links/${link.id}`, token: owner.token });
        const { APP_INSTALL, APP_FIRST_OPEN, APP_RE_OPEN } = report.json().data.analytics.appEvents.counts;
        return { APP_INSTALL, APP_FIRST_OPEN, APP_RE_OPEN };
      };
      await expect.poll(async () => (await counts()).APP_FIRST_OPEN.ANDROID, { timeout: 20_000, interval: 100 }).toBe(1);
      await waitForIdle(queue);
      const none = { ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0 };
      expect(await counts()).toEqual({
        APP_INSTALL: { ...none, ANDROID: 1 },
        APP_FIRST_OPEN: { ...none, ANDROID: 1 },
        APP_RE_OPEN: none,
      });
    } finally {
      await worker.close();
    }
  });
});
