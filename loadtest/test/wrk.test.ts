import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTool } from '../../scripts/services.mjs';
import { errorCount, parseWrkOutput, runWrk, wrkCommand, wrkScript, writeWrkScript } from '../src/wrk.js';

// What wrk prints with our script: its own summary, then the line from done().
const SAMPLE_OUTPUT = `Running 2s test @ http://127.0.0.1:8080
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   412.51us  187.97us   9.16ms   96.10%
    Req/Sec    77.68k     3.12k   81.02k    80.00%
  155364 requests in 2.00s, 23.86MB read
  Non-2xx or 3xx responses: 3
Requests/sec:  77682.91
Transfer/sec:     11.93MB
WRK_RESULT {"requests":155364,"duration_us":2000000,"bytes":25018000,"errors":{"connect":0,"read":1,"write":0,"status":3,"timeout":2},"latency_us":{"mean":412.5,"p50":380,"p90":520,"p99":1250,"p999":4100,"max":9160}}
`;

describe('parseWrkOutput', () => {
  it('reads the result line into rates, millisecond latencies and errors', () => {
    const result = parseWrkOutput(SAMPLE_OUTPUT);
    expect(result.requests).toBe(155_364);
    expect(result.seconds).toBe(2);
    expect(result.requestsPerSecond).toBe(77_682);
    expect(result.latencyMs).toEqual({ mean: 0.4125, p50: 0.38, p90: 0.52, p99: 1.25, p999: 4.1, max: 9.16 });
    expect(result.errors).toEqual({ connect: 0, read: 1, write: 0, status: 3, timeout: 2 });
    expect(errorCount(result)).toBe(6);
  });

  it('fails clearly when wrk did not run our script', () => {
    expect(() => parseWrkOutput('Requests/sec: 1000\n')).toThrow(/no result line/);
  });
});

describe('wrkScript', () => {
  const requests = [
    { path: '/abc', userAgent: 'Agent "one"' },
    { path: '/def', userAgent: 'Agent two' },
  ];

  it('embeds every request with its agent and headers, quoted for Lua', () => {
    const script = wrkScript([...requests, { path: '/me', userAgent: 'k', headers: { Authorization: 'Bearer t' } }]);
    expect(script).toContain('{ "/abc", { ["User-Agent"] = "Agent \\"one\\"" }, "GET" },');
    expect(script).toContain('{ "/def", { ["User-Agent"] = "Agent two" }, "GET" },');
    expect(script).toContain('{ "/me", { ["User-Agent"] = "k", ["Authorization"] = "Bearer t" }, "GET" },');
    expect(script).not.toContain('function delay');
  });

  it('adds a pause of the asked length on average after each answer, only when asked', () => {
    expect(wrkScript(requests, 10)).toMatch(/function delay\(\)\n {2}return math.random\(5, 15\)\nend/);
  });

  it('refuses an empty rotation', () => {
    expect(() => wrkScript([])).toThrow();
  });
});

describe('wrkCommand', () => {
  it('pins wrk with taskset when CPUs are given', () => {
    const [command, args] = wrkCommand({ url: 'http://127.0.0.1:1', script: 's.lua', connections: 32, durationMs: 2000, cpus: '1' });
    expect(command).toBe('taskset');
    expect(args).toEqual(['-c', '1', 'wrk', '-t1', '-c32', '-d2s', '--timeout', '2s', '-s', 's.lua', 'http://127.0.0.1:1']);
    expect(wrkCommand({ url: 'u', script: 's', connections: 1, durationMs: 400 })[1]).toContain('-d1s');
  });
});

describe('the script under a real wrk', () => {
  const seen = new Map<string, number>();
  let server: http.Server;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    ensureTool('wrk'); // installed from Debian as the bench does, or a clear message saying how
    dir = mkdtempSync(join(tmpdir(), 'wrk-test-'));
    server = http.createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const key = `${request.method} ${request.url} ${request.headers['user-agent']}${request.headers.authorization ? ` ${request.headers.authorization}` : ''}${body ? ` ${body}` : ''}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      response.writeHead(request.url === '/missing' ? 404 : 302, { location: 'https://example.com/' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rotates methods, paths, agents, headers and bodies and reports answers outside 2xx/3xx', async () => {
    const script = writeWrkScript(join(dir, 'rotation.lua'), [
      { path: '/a', userAgent: 'phone' },
      { path: '/b', userAgent: 'desktop' },
      { path: '/missing', userAgent: 'bot' },
      { path: '/b', userAgent: 'desktop', headers: { Authorization: 'Bearer token' } },
      { path: '/open', userAgent: 'app', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"url":"x"}' },
    ]);
    const result = await runWrk({ url, script, connections: 2, durationMs: 1000 });
    expect(result.requests).toBeGreaterThan(30);
    expect([...seen.keys()].sort()).toEqual([
      'GET /a phone',
      'GET /b desktop',
      'GET /b desktop Bearer token',
      'GET /missing bot',
      'POST /open app {"url":"x"}',
    ]);
    // Every fifth request is the 404; wrk counts those as status errors.
    expect(result.errors.status).toBeGreaterThan(result.requests / 5 - 5);
    expect(result.errors.status).toBeLessThan(result.requests / 5 + 5);
    expect(result.latencyMs.p99).toBeGreaterThan(0);
  });
});
