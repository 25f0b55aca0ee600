// The debug pages' budget and bounds, in process: per address, in flight, and the checked files
// reused for a burst (real PostgreSQL, a real HTTP server for the files).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createDebugPages, type DebugPages } from '../src/debug-pages.js';
import { DEBUG_PAGE_CSP } from '../src/debug-page.js';

let env: TestEnvironment;
let files: Server;
let fetches = 0;
let pages: DebugPages;

beforeAll(async () => {
  files = createServer((_req, res) => {
    fetches++;
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  env = await createTestEnvironment();
  pages = createDebugPages({
    config: { BRAND_NAME: 'Acme', ASSOCIATION_CHECK_ORIGIN: `http://127.0.0.1:${(files.address() as AddressInfo).port}` },
    sql: env.sql,
    logger: capturingLogger().log,
  });
});

afterAll(async () => {
  await env?.close();
  await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
});

const text = (body: unknown) => (typeof body === 'string' ? body : Buffer.from(body as ArrayBuffer).toString());
const link = { id: '0b8f3c1e-0000-4000-8000-000000000001', defaultUrl: 'https://example.com/landing' };
const domain = { hostname: 'go.pages.test', apps: [], shortUrl: 'https://go.pages.test/spring' };

describe('createDebugPages', () => {
  it('admits five pages per address at once, then one per five seconds', () => {
    const now = Date.now();
    const admitted = Array.from({ length: 6 }, () => pages.admits('198.51.100.7', now));
    expect(admitted).toEqual([true, true, true, true, true, false]);
    expect(pages.admits('198.51.100.8', now)).toBe(true);
    expect(pages.admits('198.51.100.7', now + 5_000)).toBe(true);
    expect(pages.admits('198.51.100.7', now + 5_000)).toBe(false);
  });

  it('admits no more while eight pages are being built', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const building = Array.from({ length: 8 }, () => pages.serve(() => held.then(() => pages.forUnknown(domain))));
    expect(pages.admits('198.51.100.20', Date.now())).toBe(false);
    release();
    await Promise.all(building);
    expect(pages.admits('198.51.100.20', Date.now())).toBe(true);
  });

  it("answers a link's page under its own policy, fetching a domain's files once for a burst", async () => {
    const before = fetches;
    const [first, second] = await Promise.all([pages.forLink(link, domain), pages.forLink(link, domain)]);
    expect(fetches - before).toBe(2); // the two files, once
    expect(first.status).toBe(200);
    expect(text(first.policy)).toBe(DEBUG_PAGE_CSP);
    expect(text(first.body)).toContain('Answers 404 instead of 200');
    expect(text(second.body)).toBe(text(first.body));
  });

  it('answers an unknown code with a 404 page, and the budget with a 429', () => {
    const unknown = pages.forUnknown(domain);
    expect(unknown.status).toBe(404);
    expect(text(unknown.body)).toContain('No link has this code on this domain');
    expect(pages.busy.status).toBe(429);
  });
});
