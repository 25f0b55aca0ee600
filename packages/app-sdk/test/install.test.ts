// install() against a real API on a real port (PostgreSQL, Redis, BullMQ): the platform readers
// fill what the call leaves out, the answer is typed, retries resend the same installId, and the
// errors are the open() ones. The store visits are written as the worker writes them.
import { randomUUID } from 'node:crypto';
import { INSTALL_TOKEN_PARAM } from '@deeplink/core';
import { freePort } from '@deeplink/test-kit/processes';
import { UA } from '@deeplink/test-kit/user-agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from '../../../services/api/test/harness.js';
import { storeVisit } from '../../../services/api/test/install-clicks.js';
import { createDeepLinkClient, InvalidAppKeyError, InvalidRequestError, newInstallId, type PlatformReaders } from '../src/index.js';
import { createLink, listeningApi, recordingFetch } from './support.js';

let api: ApiHarness;
let baseUrl: string;

beforeAll(async () => {
  ({ api, baseUrl } = await listeningApi());
});
afterAll(async () => {
  await api?.close();
});

/** An Android app of a fresh user, a link for it, and a Play Store visit to that link with its token. */
async function androidVisit() {
  const user = await api.registerUser();
  const packageName = `com.example.sdkinstall${Date.now()}`;
  const created = await api.request({
    method: 'POST',
    url: '/api/apps',
    token: user.token,
    payload: { platform: 'android', packageName, sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
  });
  expect(created.statusCode, created.body).toBe(201);
  const app = created.json().data.app as { id: string; key: string };
  const link = await createLink(api, user.token, { androidLink: { url: 'shop://welcome', appPackageName: packageName } });
  const token = await storeVisit(api.env.sql, api.env.config.VISITOR_SALT, {
    linkId: link.id,
    platform: 'ANDROID',
    ip: '203.0.113.9',
    userAgent: UA.androidChrome,
    clickedAt: Date.now() - 60_000,
  });
  return { app, link, referrer: `utm_source=google-play&${INSTALL_TOKEN_PARAM}=${token}` };
}

describe('install', () => {
  it('reads the referrer from its platform reader and answers the match', async () => {
    const { app, link, referrer } = await androidVisit();
    const reads: string[] = [];
    const platform: PlatformReaders = {
      installReferrer: {
        readInstallReferrer: async () => {
          reads.push('referrer');
          return referrer;
        },
      },
      pasteboard: {
        readPasteboardUrl: async () => {
          reads.push('pasteboard');
          throw new Error('no pasteboard access');
        },
      },
      device: {
        readDeviceFacts: async () => {
          reads.push('device');
          return { platform: 'android', osVersion: '14', locale: 'fr-FR' };
        },
      },
    };
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch, platform });
    const installId = newInstallId();
    const result = await client.install({ installId });
    expect(result).toEqual({
      match: {
        link: { id: link.id, code: link.code, url: link.url },
        deepLink: 'shop://welcome',
        parameters: {},
        webUrl: 'https://shop.example.com/spring',
        matchedBy: 'install-referrer',
      },
    });
    expect(reads.sort()).toEqual(['device', 'pasteboard', 'referrer']);
    // The failing pasteboard reader is left out, and so are device facts without a device family.
    expect(bodies).toEqual([{ installId, referrer }]);
    // The same install asking again (the next launch) gets the same answer.
    expect(await client.install({ installId })).toEqual(result);
  });

  it('answers { match: null } for an install nothing brought, with a generated installId', async () => {
    const { app } = await androidVisit();
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });
    expect(await client.install({ referrer: 'utm_source=google-play&utm_medium=organic' })).toEqual({ match: null });
    expect(bodies).toEqual([
      { installId: expect.stringMatching(/^[0-9a-f-]{36}$/), referrer: 'utm_source=google-play&utm_medium=organic' },
    ]);
  });

  it('retries a connection failure with the same installId, and the retry is answered', async () => {
    const { app, link, referrer } = await androidVisit();
    const dead = `http://127.0.0.1:${await freePort()}`;
    const { fetch, bodies } = recordingFetch((url, attemptNo) => (attemptNo === 1 ? url.replace(new URL(baseUrl).origin, dead) : url));
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });
    const installId = randomUUID();
    const result = await client.install({ installId, referrer });
    expect(result.match?.link.id).toBe(link.id);
    expect(bodies).toEqual([
      { installId, referrer },
      { installId, referrer },
    ]);
  });

  it('throws InvalidRequestError for a malformed installId and InvalidAppKeyError for an unknown key, without retrying', async () => {
    const { app } = await androidVisit();
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });
    const invalid = await client.install({ installId: 'short' }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect((invalid as InvalidRequestError).details).toEqual([expect.objectContaining({ field: 'installId' })]);
    const stale = createDeepLinkClient({ baseUrl, appKey: 'dla_rotated', fetch });
    await expect(stale.install({ installId: randomUUID() })).rejects.toBeInstanceOf(InvalidAppKeyError);
    expect(bodies).toHaveLength(2);
  });
});
