import { logLines } from '@deeplink/test-kit/logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { DEBUG_PAGE_CSP } from '../src/debug-page.js';
import { createLink, createUser, metric, runToExit, startRedirector, visit, visitAs } from './support.js';

describe('uWebSockets.js JS fallback', () => {
  let env: TestEnvironment;
  beforeAll(async () => {
    env = await createTestEnvironment();
  });
  afterAll(() => env?.close());

  it('refuses to start on the fallback', async () => {
    const { code, output } = await runToExit({ ...env.env, UWS_USE_FALLBACK: '1', ALLOW_UWS_FALLBACK: '' });
    expect(code).toBe(1);
    expect(output).toMatch(/"level":"fatal".*refusing to run on its slow JS fallback/);
    expect(output).not.toContain('"msg":"listening"');
  });

  it('runs on the fallback when ALLOW_UWS_FALLBACK=1, and says so', async () => {
    const link = await createLink(env.sql, await createUser(env.sql), { defaultUrl: 'https://example.com/slow' });
    const redirector = await startRedirector({ ...env.env, UWS_USE_FALLBACK: '1', ALLOW_UWS_FALLBACK: '1' });
    try {
      expect(logLines(redirector.output)).toContainEqual(
        expect.objectContaining({ level: 'warn', service: 'redirector', msg: 'uWebSockets.js loaded', uws: 'fallback' }),
      );
      expect(await metric(redirector.metricsUrl, 'redirector_uws_native')).toBe(0);
      const res = await visit(`${redirector.url}/${link.code}?x=1`);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/slow');
      expect((await visit(`${redirector.url}/${link.code}`, {}, 'HEAD')).status).toBe(302);
      // The fallback leaves the query on the URL: the debug page is found there, under its own policy alone.
      const debug = await visit(`${redirector.url}/${link.code}?x=1&d=1`);
      expect(debug.status).toBe(200);
      expect(debug.headers.get('content-security-policy')).toBe(DEBUG_PAGE_CSP);
      expect(await debug.text()).toContain('302 to https://example.com/slow');
      // Long links: the fallback leaves the query on the URL, and / without one is a plain 404.
      const userId = await createUser(env.sql);
      await env.sql`
        INSERT INTO domains (user_id, hostname, verification_token, verified_at, allowed_url_patterns)
        VALUES (${userId}, 'slow.example.test', 't', now(), ARRAY['https://example.com/*'])`;
      expect(await visitAs(`${redirector.url}/?link=${encodeURIComponent('https://example.com/long')}`, 'slow.example.test')).toMatchObject(
        {
          status: 302,
          location: 'https://example.com/long',
        },
      );
      expect((await visitAs(`${redirector.url}/`, 'slow.example.test')).status).toBe(404);
    } finally {
      expect(await redirector.stop()).toBe(0);
    }
  });
});
