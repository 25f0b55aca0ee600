import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { AssociatedApp } from '@deeplink/core';
import { isPublicAddress, NOT_PUBLIC, notPublic, publicLookup } from '@deeplink/core/net';

/** How long the check waits for each file, and the most of it it reads (Apple's own limit is 128 KB). */
export const CHECK_TIMEOUT_MS = 3_000;
export const CHECK_MAX_BYTES = 128 * 1024;

export const ASSOCIATION_PATHS = {
  apple: '/.well-known/apple-app-site-association',
  android: '/.well-known/assetlinks.json',
} as const;

/** One thing the check found, in words: `ok` as it should be, `problem` what stops the app opening, `note` worth knowing. */
export interface Finding {
  level: 'ok' | 'problem' | 'note';
  text: string;
}

/** The findings of one association file, as the public fetches it. */
export interface FileCheck {
  file: 'apple' | 'android';
  /** The file's public address: https://<hostname>/.well-known/… */
  url: string;
  findings: Finding[];
}

/**
 * The apps a domain's files should name: its registered apps (the account's on a custom domain,
 * DEFAULT_DOMAIN_APPS on the default one), and the apps the link itself opens, as far as they are
 * known (a link names an iOS app by bundle id alone; its team id is known when the app is registered).
 */
export interface ExpectedApps {
  domain: readonly AssociatedApp[];
  /** The link's iosLink.bundleId, when it has one. */
  iosBundleId?: string;
  /** The link's androidLink.appPackageName, when it has one. */
  androidPackage?: string;
}

/** What the check fetches: a domain's files, from `origin` (by default https://<hostname>). */
export interface CheckTarget {
  hostname: string;
  /** The short link's path (`/code`), which Apple's file must hand to the app. */
  path: string;
  /** Where the files are fetched from; the Host header names `hostname` whatever it is. */
  origin: URL;
  /**
   * Connect to public addresses only: a domain's owner decides where its name points, and the
   * check must not become a way to probe the network the redirector sits in. Off for an origin the
   * operator configured.
   */
  publicOnly: boolean;
}

/** Both files of the domain, checked side by side. */
export function checkAssociationFiles(target: CheckTarget, apps: ExpectedApps): Promise<FileCheck[]> {
  return Promise.all([
    checkFile(target, 'apple', (body) => appleFindings(body, apps, target.path)),
    checkFile(target, 'android', (body) => androidFindings(body, apps)),
  ]);
}

/** A fetched file: its status, content type and body (undefined when it was cut at CHECK_MAX_BYTES). */
interface Fetched {
  status: number;
  contentType: string;
  body: string | undefined;
}

async function checkFile(target: CheckTarget, file: 'apple' | 'android', readBody: (body: unknown) => Finding[]): Promise<FileCheck> {
  const path = ASSOCIATION_PATHS[file];
  const url = `https://${target.hostname}${path}`;
  let fetched: Fetched;
  try {
    fetched = await fetchFile(target, path);
  } catch (error) {
    return { file, url, findings: [{ level: 'problem', text: `Not reachable: ${failureInWords(error)}.` }] };
  }
  return { file, url, findings: responseFindings(fetched, file, readBody) };
}

function responseFindings(fetched: Fetched, file: 'apple' | 'android', readBody: (body: unknown) => Finding[]): Finding[] {
  const { status, contentType, body } = fetched;
  if (status >= 300 && status < 400) {
    return [
      {
        level: 'problem',
        text: `Answers a redirect (${status}): ${VERIFIER[file]} follows no redirect, so the file must answer 200 itself.`,
      },
    ];
  }
  if (status !== 200) {
    const why =
      status === 404 ? 'no app of this platform is registered for the domain, or the file is not served' : 'the file is not served';
    return [{ level: 'problem', text: `Answers ${status} instead of 200: ${why}.` }];
  }
  const findings: Finding[] = [{ level: 'ok', text: 'Answers 200 without a redirect.' }];
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  findings.push(
    type === 'application/json'
      ? { level: 'ok', text: 'Content-Type is application/json.' }
      : { level: 'problem', text: `Content-Type is ${type === '' ? 'missing' : quoted(type)}, not application/json.` },
  );
  if (body === undefined) {
    findings.push({ level: 'problem', text: `Larger than ${CHECK_MAX_BYTES / 1024} KB: ${VERIFIER[file]} reads no more.` });
    return findings;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    findings.push({ level: 'problem', text: 'Is not valid JSON.' });
    return findings;
  }
  return [...findings, { level: 'ok', text: 'Is valid JSON.' }, ...readBody(parsed)];
}

const VERIFIER = { apple: "Apple's CDN", android: "Android's verifier" } as const;

/** Text from a file, shortened and quoted for a finding (the page escapes it). */
const quoted = (text: string) => `"${text.length > 80 ? `${text.slice(0, 80)}…` : text}"`;

/**
 * Apple's file: each expected app id listed in `applinks.details`, and its components (or the
 * older `paths`) handing the short link's path to the app.
 */
export function appleFindings(file: unknown, apps: ExpectedApps, path: string): Finding[] {
  const details = (file as { applinks?: { details?: unknown } } | null)?.applinks?.details;
  if (!Array.isArray(details)) return [{ level: 'problem', text: 'Has no applinks.details list: no app may open links of this domain.' }];
  const entries = details.filter(isObject).map((detail) => ({ ids: appIdsOf(detail), covers: coversPath(detail, path) }));
  const expected = new Map<string, string>();
  for (const app of apps.domain) if (app.platform === 'ios') expected.set(`${app.teamId}.${app.bundleId}`, 'registered for this domain');
  const findings: Finding[] = [];
  for (const [appId, why] of expected) findings.push(...appIdFindings(entries, appId, why, path));
  const { iosBundleId } = apps;
  if (iosBundleId !== undefined && ![...expected.keys()].some((id) => id.endsWith(`.${iosBundleId}`))) {
    // The link's own app, unregistered: its team id is unknown, so any team's id for the bundle will do.
    const listed = [...new Set(entries.flatMap((entry) => entry.ids))].find((id) => id.slice(id.indexOf('.') + 1) === iosBundleId);
    findings.push(
      listed === undefined
        ? { level: 'problem', text: `Lists no app id for the link's iOS app ${iosBundleId} (TEAMID.${iosBundleId}).` }
        : { level: 'note', text: `Lists ${listed}, the link's iOS app: register it (POST /api/apps) so this domain keeps serving it.` },
    );
    if (listed !== undefined) findings.push(...appIdFindings(entries, listed, "the link's iOS app", path).slice(1));
  }
  if (expected.size === 0 && iosBundleId === undefined)
    findings.push({ level: 'note', text: 'Neither the domain nor the link names an iOS app.' });
  return findings;
}

function appIdFindings(entries: { ids: string[]; covers: boolean }[], appId: string, why: string, path: string): Finding[] {
  const listing = entries.filter((entry) => entry.ids.includes(appId));
  if (listing.length === 0) return [{ level: 'problem', text: `Does not list the app id ${appId} (${why}).` }];
  return [
    { level: 'ok', text: `Lists the app id ${appId} (${why}).` },
    listing.some((entry) => entry.covers)
      ? { level: 'ok', text: `Hands ${path} to ${appId}.` }
      : { level: 'problem', text: `Does not hand ${path} to ${appId}: its components (or paths) exclude it or match other paths only.` },
  ];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : []);

/** The app ids of one detail: iOS 13's `appIDs`, or the older single `appID`. */
function appIdsOf(detail: Record<string, unknown>): string[] {
  return typeof detail.appID === 'string' ? [detail.appID, ...strings(detail.appIDs)] : strings(detail.appIDs);
}

/**
 * Whether a detail hands `path` to its app: the first of its components whose `/` pattern matches
 * decides (an `exclude` one keeps the path in the browser), as Apple evaluates them; without
 * components, the older `paths` list, where `NOT ` marks an exclusion. Query and fragment
 * conditions are not weighed: a short link carries neither.
 */
export function coversPath(detail: Record<string, unknown>, path: string): boolean {
  if (Array.isArray(detail.components)) {
    for (const component of detail.components.filter(isObject)) {
      const pattern = component['/'];
      if (typeof pattern === 'string' && matchesPattern(pattern, path)) return component.exclude !== true;
    }
    return false;
  }
  for (const entry of strings(detail.paths)) {
    const exclude = entry.startsWith('NOT ');
    if (matchesPattern(exclude ? entry.slice(4) : entry, path)) return !exclude;
  }
  return false;
}

/** Apple's path patterns: `*` any run of characters, `?` any one; the rest literally, the whole path. */
function matchesPattern(pattern: string, path: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(path);
}

const HANDLE_ALL_URLS = 'delegate_permission/common.handle_all_urls';

/**
 * Google's file: a handle_all_urls statement for each expected package, with every registered
 * certificate fingerprint. Its statements cover every path of the domain: which paths an app
 * takes is in the app's intent filter, not here.
 */
export function androidFindings(file: unknown, apps: ExpectedApps): Finding[] {
  if (!Array.isArray(file)) return [{ level: 'problem', text: 'Is not a list of statements.' }];
  const statements = file.filter(isObject).flatMap((statement) => {
    const target = statement.target;
    if (!isObject(target) || target.namespace !== 'android_app' || !strings(statement.relation).includes(HANDLE_ALL_URLS)) return [];
    return typeof target.package_name === 'string'
      ? [{ packageName: target.package_name, fingerprints: strings(target.sha256_cert_fingerprints).map((print) => print.toUpperCase()) }]
      : [];
  });
  const findings: Finding[] = [];
  const expected = apps.domain.filter((app) => app.platform === 'android');
  for (const app of expected) {
    const listed = statements.filter((statement) => statement.packageName === app.packageName);
    if (listed.length === 0) {
      findings.push({ level: 'problem', text: `Has no handle_all_urls statement for ${app.packageName} (registered for this domain).` });
      continue;
    }
    const prints = new Set(listed.flatMap((statement) => statement.fingerprints));
    const missing = app.sha256CertFingerprints.filter((print) => !prints.has(print));
    findings.push(
      missing.length === 0
        ? {
            level: 'ok',
            text: `Lets ${app.packageName} open every path, with its ${app.sha256CertFingerprints.length} registered certificate fingerprint(s).`,
          }
        : {
            level: 'problem',
            text: `Lacks ${missing.length} registered certificate fingerprint(s) of ${app.packageName}: ${missing.join(', ')}.`,
          },
    );
  }
  const { androidPackage } = apps;
  if (androidPackage !== undefined && !expected.some((app) => app.packageName === androidPackage)) {
    findings.push(
      statements.some((statement) => statement.packageName === androidPackage)
        ? {
            level: 'note',
            text: `Lists ${androidPackage}, the link's Android app: register it (POST /api/apps) so this domain keeps serving it.`,
          }
        : { level: 'problem', text: `Has no handle_all_urls statement for the link's Android app ${androidPackage}.` },
    );
  }
  if (expected.length === 0 && androidPackage === undefined)
    findings.push({ level: 'note', text: 'Neither the domain nor the link names an Android app.' });
  return findings;
}

/** A failed fetch in words: never the error's own message, which may name an address. */
function failureInWords(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ETIMEDOUT') return `no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the hostname does not resolve';
  if (code === 'ECONNREFUSED') return 'the connection was refused (nothing listens on the HTTPS port)';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the connection was closed';
  if (code === NOT_PUBLIC) return 'the hostname points to an address that is not public';
  if (/CERT|SELF_SIGNED|ALTNAME|TLS|SSL/i.test(code)) return `the TLS certificate is not accepted (${code})`;
  return 'the request failed';
}

/**
 * GETs `path` from the target's origin with the domain's Host (and TLS server name), following no
 * redirect, within CHECK_TIMEOUT_MS and reading at most CHECK_MAX_BYTES.
 */
function fetchFile({ hostname, origin, publicOnly }: CheckTarget, path: string): Promise<Fetched> {
  const secure = origin.protocol === 'https:';
  const request = secure ? httpsRequest : httpRequest;
  const host = origin.hostname.replace(/^\[|\]$/g, '');
  // An address in the URL is connected to without a lookup: checked here.
  if (publicOnly && isIP(host) !== 0 && !isPublicAddress(host)) return Promise.reject(notPublic(host));
  return new Promise((resolve, reject) => {
    const timeout = Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' });
    const req = request(
      {
        host,
        port: origin.port || (secure ? 443 : 80),
        ...(publicOnly && { lookup: publicLookup }),
        path,
        headers: { host: hostname, accept: 'application/json', 'user-agent': 'deeplink-association-check' },
        ...(secure && { servername: hostname }),
        agent: false,
      },
      (res) => readCapped(res).then(resolve, reject),
    );
    // Rejected at once, whatever stage the request is at: the body may be trickling in.
    const timer = setTimeout(() => {
      reject(timeout);
      req.destroy(timeout);
    }, CHECK_TIMEOUT_MS);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end();
  });
}

function readCapped(res: IncomingMessage): Promise<Fetched> {
  const status = res.statusCode ?? 0;
  const contentType = res.headers['content-type'] ?? '';
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > CHECK_MAX_BYTES) {
        res.destroy();
        resolve({ status, contentType, body: undefined });
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve({ status, contentType, body: Buffer.concat(chunks).toString('utf8') }));
    res.on('error', reject);
  });
}
