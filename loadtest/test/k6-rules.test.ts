import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, healthy, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';
import { AGENTS, expectedAnswer, pathOf } from '../k6/lib/traffic.js';
import { createLinks, createSession, type SeededLink } from '../src/seed.js';

// The k6 scripts cannot run here (no k6), so their traffic model and checks are verified against
// the real API and redirector: every agent of the mix on every link shape.
describe('k6 traffic model against the real services', () => {
  let env: TestEnvironment;
  const processes: RunningProcess[] = [];
  let shortUrlBase: string;
  let links: SeededLink[];

  beforeAll(async () => {
    const [apiPort, redirectorPort] = await Promise.all([freePort(), freePort()]);
    shortUrlBase = `http://127.0.0.1:${redirectorPort}`;
    env = await createTestEnvironment({
      API_PORT: String(apiPort),
      REDIRECTOR_PORT: String(redirectorPort),
      SHORT_URL_BASE: shortUrlBase,
      RATE_LIMIT_AUTH_MAX: '1000',
      RATE_LIMIT_MAX: '100000',
    });
    processes.push(await startProcess('api', { env: env.env, ready: healthy(`http://127.0.0.1:${apiPort}`) }));
    processes.push(await startProcess('redirector', { env: env.env, ready: healthy(shortUrlBase) }));
    const session = await createSession(`http://127.0.0.1:${apiPort}/api`, 'k6-rules');
    links = await createLinks(session, 4, 'k6 rules', { concurrency: 1 });
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await env?.close();
  });

  it('answers every agent on every link shape as expectedAnswer() says', async () => {
    for (const [index, link] of links.entries()) {
      for (const agent of AGENTS) {
        const response = await fetch(`${shortUrlBase}/${link.code}`, { redirect: 'manual', headers: { 'user-agent': agent.userAgent } });
        await response.arrayBuffer();
        const expected = expectedAnswer({ id: link.id, url: '', shape: index % 4, index }, agent.platform);
        const context = `shape ${index % 4}, ${agent.userAgent}`;
        expect(response.status, context).toBe(expected.status);
        if (expected.location)
          expect(response.headers.get('location'), context).toMatch(new RegExp(`^${expected.location.replace(/[.?]/g, '\\$&')}`));
        expect(response.headers.get('cache-control'), context).toContain('no-store');
      }
    }
  });

  it('reads the path of a short URL', () => {
    expect(pathOf('https://sho.rt/AbC1234')).toBe('/AbC1234');
    expect(pathOf('http://127.0.0.1:8080/x?y=1')).toBe('/x?y=1');
    expect(pathOf('https://sho.rt')).toBe('/');
  });
});
