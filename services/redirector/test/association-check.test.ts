// The debug page's check of a domain's association files, against a real HTTP server that serves
// each test hostname's files its own (broken) way.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appleAppSiteAssociation, type AssociatedApp, assetLinks } from '@deeplink/core';
import { CHECK_MAX_BYTES, checkAssociationFiles, coversPath, type ExpectedApps, type FileCheck } from '../src/association-check.js';

const PRINT = Array(32).fill('AB').join(':');
const OTHER_PRINT = Array(32).fill('CD').join(':');
const APPS: AssociatedApp[] = [
  { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.shop' },
  { platform: 'android', packageName: 'com.example.shop', sha256CertFingerprints: [PRINT] },
];
const EXPECTED: ExpectedApps = { domain: APPS, iosBundleId: 'com.example.shop', androidPackage: 'com.example.shop' };

type Serve = (res: ServerResponse, file: 'apple' | 'android') => void;
const json =
  (body: string, type = 'application/json'): Serve =>
  (res) =>
    res.writeHead(200, { 'content-type': type }).end(body);
const good: Serve = (res, file) => json(file === 'apple' ? appleAppSiteAssociation(APPS) : assetLinks(APPS))(res, file);

/** How each hostname serves its files: the Host header picks one, as it would pick a real site. */
const SITES: Record<string, Serve> = {
  'good.example.test': good,
  'html.example.test': (res, file) => json(file === 'apple' ? appleAppSiteAssociation(APPS) : assetLinks(APPS), 'text/html')(res, file),
  'moved.example.test': (res) => res.writeHead(301, { location: 'https://www.example.test/.well-known/x' }).end(),
  'broken.example.test': json('{"applinks": {"details": [}'),
  'missing.example.test': (res) => res.writeHead(404).end(),
  'other-app.example.test': (res, file) =>
    json(
      file === 'apple'
        ? appleAppSiteAssociation([{ platform: 'ios', teamId: 'ZZZZZ99999', bundleId: 'com.example.other' }])
        : assetLinks([{ platform: 'android', packageName: 'com.example.shop', sha256CertFingerprints: [OTHER_PRINT] }]),
    )(res, file),
  'excluded.example.test': (res, file) =>
    file === 'apple'
      ? json(
          JSON.stringify({
            applinks: {
              details: [{ appIDs: ['ABCDE12345.com.example.shop'], components: [{ '/': '/spring', exclude: true }, { '/': '/*' }] }],
            },
          }),
        )(res, file)
      : good(res, file),
  'huge.example.test': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`[${' '.repeat(CHECK_MAX_BYTES)}]`),
};

let server: Server;
let origin: URL;

beforeAll(async () => {
  server = createServer((req, res) => {
    const serve = SITES[req.headers.host ?? ''];
    const file =
      req.url === '/.well-known/apple-app-site-association' ? 'apple' : req.url === '/.well-known/assetlinks.json' ? 'android' : undefined;
    if (!serve || !file) return res.writeHead(404).end();
    serve(res, file);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const check = (hostname: string, apps = EXPECTED, path = '/spring') =>
  checkAssociationFiles({ hostname, path, origin, publicOnly: false }, apps);
const problems = (checks: FileCheck[], file: 'apple' | 'android') =>
  checks
    .find((c) => c.file === file)!
    .findings.filter((finding) => finding.level === 'problem')
    .map((finding) => finding.text);

describe('checkAssociationFiles', () => {
  it('finds nothing wrong with files as the redirector serves them, and names their public addresses', async () => {
    const checks = await check('good.example.test');
    expect(checks.map((c) => c.url)).toEqual([
      'https://good.example.test/.well-known/apple-app-site-association',
      'https://good.example.test/.well-known/assetlinks.json',
    ]);
    expect(problems(checks, 'apple')).toEqual([]);
    expect(problems(checks, 'android')).toEqual([]);
    const apple = checks[0]!.findings.map((finding) => finding.text);
    expect(apple).toContain('Lists the app id ABCDE12345.com.example.shop (registered for this domain).');
    expect(apple).toContain('Hands /spring to ABCDE12345.com.example.shop.');
  });

  it('says when the Content-Type is not application/json', async () => {
    const checks = await check('html.example.test');
    expect(problems(checks, 'apple')).toEqual(['Content-Type is "text/html", not application/json.']);
    expect(problems(checks, 'android')).toEqual(['Content-Type is "text/html", not application/json.']);
  });

  it('says when a file answers a redirect, which the verifiers do not follow', async () => {
    const checks = await check('moved.example.test');
    expect(problems(checks, 'apple')).toEqual([
      "Answers a redirect (301): Apple's CDN follows no redirect, so the file must answer 200 itself.",
    ]);
    expect(problems(checks, 'android')[0]).toMatch(/^Answers a redirect \(301\)/);
  });

  it('says when a file is not valid JSON', async () => {
    expect(problems(await check('broken.example.test'), 'apple')).toEqual(['Is not valid JSON.']);
  });

  it('says when a file is missing', async () => {
    expect(problems(await check('missing.example.test'), 'android')[0]).toMatch(/^Answers 404 instead of 200/);
  });

  it("says when the app ids or certificate fingerprints are another app's", async () => {
    const checks = await check('other-app.example.test');
    expect(problems(checks, 'apple')).toEqual(['Does not list the app id ABCDE12345.com.example.shop (registered for this domain).']);
    expect(problems(checks, 'android')).toEqual([`Lacks 1 registered certificate fingerprint(s) of com.example.shop: ${PRINT}.`]);
  });

  it("names the link's own apps when the domain does not register them", async () => {
    const checks = await check('good.example.test', { domain: [], iosBundleId: 'com.example.other', androidPackage: 'com.example.shop' });
    expect(problems(checks, 'apple')).toEqual(["Lists no app id for the link's iOS app com.example.other (TEAMID.com.example.other)."]);
    expect(problems(checks, 'android')).toEqual([]);
    expect(checks[1]!.findings.map((finding) => finding.text)).toContain(
      "Lists com.example.shop, the link's Android app: register it (POST /api/apps) so this domain keeps serving it.",
    );
  });

  it("says when the link's path is not handed to the app", async () => {
    const checks = await check('excluded.example.test');
    expect(problems(checks, 'apple')).toEqual([
      'Does not hand /spring to ABCDE12345.com.example.shop: its components (or paths) exclude it or match other paths only.',
    ]);
    expect(problems(await check('excluded.example.test', EXPECTED, '/summer'), 'apple')).toEqual([]);
  });

  it('reads no more than the size cap', async () => {
    const checks = await check('huge.example.test');
    expect(problems(checks, 'android')).toEqual([`Larger than ${CHECK_MAX_BYTES / 1024} KB: Android's verifier reads no more.`]);
  });

  it('says a server that is not there is not reachable, without naming its address', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const checks = await checkAssociationFiles(
      { hostname: 'gone.example.test', path: '/x', origin: new URL(`http://127.0.0.1:${port}`), publicOnly: false },
      EXPECTED,
    );
    const [finding] = checks[0]!.findings;
    expect(finding).toEqual({ level: 'problem', text: 'Not reachable: the connection was refused (nothing listens on the HTTPS port).' });
    expect(JSON.stringify(checks)).not.toContain('127.0.0.1');
  });

  it('gives up on a server that does not answer within the timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const started = Date.now();
    const checks = await checkAssociationFiles(
      {
        hostname: 'slow.example.test',
        path: '/x',
        origin: new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`),
        publicOnly: false,
      },
      EXPECTED,
    );
    expect(checks[0]!.findings[0]!.text).toBe('Not reachable: no answer within 3 s.');
    expect(Date.now() - started).toBeLessThan(5_000);
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});

describe('public addresses only', () => {
  it("refuses a name or an address that is not public, unless the origin is the operator's", async () => {
    const target = { hostname: 'good.example.test', path: '/spring', publicOnly: true };
    for (const at of [origin, new URL(`http://localhost:${origin.port}`)]) {
      const checks = await checkAssociationFiles({ ...target, origin: at }, EXPECTED);
      expect(checks[0]!.findings, at.href).toEqual([
        { level: 'problem', text: 'Not reachable: the hostname points to an address that is not public.' },
      ]);
    }
    expect(problems(await checkAssociationFiles({ ...target, origin, publicOnly: false }, EXPECTED), 'apple')).toEqual([]);
  });
});

describe('coversPath', () => {
  it("follows Apple's rules: the first matching component decides, the older paths list with NOT", () => {
    expect(coversPath({ components: [{ '/': '/healthz', exclude: true }, { '/': '/*' }] }, '/abc')).toBe(true);
    expect(coversPath({ components: [{ '/': '/a?c', exclude: true }, { '/': '/*' }] }, '/abc')).toBe(false);
    expect(coversPath({ components: [{ '/': '/shop/*' }] }, '/abc')).toBe(false);
    expect(coversPath({ paths: ['NOT /abc', '*'] }, '/abc')).toBe(false);
    expect(coversPath({ paths: ['/ab*'] }, '/abc')).toBe(true);
    expect(coversPath({}, '/abc')).toBe(false);
  });
});
