import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { logLines } from '@deeplink/test-kit/logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { DEBUG_PAGE_CSP } from '../src/debug-page.js';
import { clickQueue, createLink, createUser, metric, queuedClicks, runToExit, startRedirector, visit, visitAs } from './support.js';

/**
 * A request sent in two parts on a connection of its own: the head now, without its final blank
 * line (the server has begun reading it: the connection is not idle), the rest on `finish()`.
 * `answer` resolves with what came back before the connection closed.
 */
function requestInTwoParts(url: string, path: string, referrer: string) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => {}); // a reset is an answer too: none
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nReferer: ${referrer}\r\n`);
  return { answer, finish: () => socket.write('\r\n') };
}

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

  it('drops open connections at shutdown: no visitor is redirected after the clicks were flushed', async () => {
    const link = await createLink(env.sql, await createUser(env.sql));
    const redirector = await startRedirector({
      ...env.env,
      UWS_USE_FALLBACK: '1',
      ALLOW_UWS_FALLBACK: '1',
      CLICK_FLUSH_MS: '600000',
    });
    const queue = clickQueue(env.config.REDIS_URL, env.config.QUEUE_PREFIX);
    try {
      expect((await visit(`${redirector.url}/${link.code}`, { referer: 'before' })).status).toBe(302); // now cached
      const late = Array.from({ length: 20 }, (_, i) => ({
        referrer: `late-${i}`,
        ...requestInTwoParts(redirector.url, `/${link.code}`, `late-${i}`),
      }));
      await sleep(100); // every head has arrived
      const stopped = redirector.stop();
      // The rest of each request arrives at a different moment of the shutdown. The fallback's Node
      // server, closed, still serves a connection busy with a request; what it answered after the
      // last flush was a redirect whose click was never queued.
      for (const request of late) {
        request.finish();
        await sleep(1);
      }
      expect(await stopped).toBe(0);
      const answers = await Promise.all(late.map(async ({ referrer, answer }) => ({ referrer, answer: await answer })));
      const redirected = answers.filter(({ answer }) => answer.startsWith('HTTP/1.1 302')).map(({ referrer }) => referrer);
      const queued = (await queuedClicks(queue)).filter((click) => click.linkId === link.id).map((click) => click.referrer);
      expect(queued).toContain('before');
      expect(redirected.filter((referrer) => !queued.includes(referrer))).toEqual([]);
    } finally {
      await queue.close();
    }
  });
});
