import {
  APP_PAGE_FALLBACK_DELAY_MS,
  detectPlatform,
  escapeHtml,
  explainRoute,
  hasIpadRoute,
  isExpired,
  isIpad,
  PREVIEW_CRAWLERS,
  parseWebUrl,
  type RouteReason,
} from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { createHash } from 'node:crypto';
import type { FileCheck, Finding } from './association-check.js';
import { buildAnswers, getsPreview, linkAnswer } from './link-answers.js';

/**
 * The debug page (`?d=1`): where each kind of visitor goes and why, worked out by the redirect's
 * own code (buildAnswers, getsPreview, linkAnswer and the routing rules' explainRoute) with one
 * sample User-Agent per kind, so the page can never tell a different story than the redirect.
 */

/** One kind of visitor, as the redirect sees it: by its User-Agent. */
interface Visitor {
  name: string;
  userAgent: string;
  /** Android only: whether the app is installed (the redirect is the same; where it leads is not). */
  hasApp?: boolean;
}

const VISITORS: readonly Visitor[] = [
  {
    name: 'Android, app installed',
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
    hasApp: true,
  },
  {
    name: 'Android, app not installed',
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
    hasApp: false,
  },
  {
    name: 'iPhone',
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iPad',
    userAgent:
      'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'Desktop',
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  },
  { name: 'Link-preview crawler', userAgent: PREVIEW_CRAWLERS[0].example },
];

/** Where one kind of visitor goes, and the rule that decided it, in words. */
export interface VisitorCase {
  visitor: string;
  /** What the visitor gets, e.g. "302 to https://…". */
  goesTo: string;
  why: string;
}

/** Stands in for the install token a real visit gets, so the page shows where it goes. */
const TOKEN_STAND_IN = 'VISIT_INSTALL_TOKEN';

/**
 * What a live link's visitors get at `now`: one case per kind of visitor. A protected link's page
 * is as public as the link, so it says only that every visitor gets the password form: where the
 * link leads is for those who have the password (its owner sees it in the dashboard).
 */
export function visitorCases(link: CachedLink, shortUrl: string, now: number): VisitorCase[] {
  if (link.passwordHash !== undefined) {
    return [
      {
        visitor: 'Every visitor',
        goesTo: '200, the password page (401 after a wrong password)',
        why: 'The link is protected by a password. Where it leads after the right password is not shown here.',
      },
    ];
  }
  const answers = buildAnswers(link, shortUrl);
  const expired = isExpired(link, now);
  const cases = VISITORS.map(({ name, userAgent, hasApp }) => {
    if (expired) {
      const expiredUrl = parseWebUrl(link.expiredUrl)?.href;
      return {
        visitor: name,
        goesTo: expiredUrl === undefined ? '410, the "Link expired" page' : `302 to ${expiredUrl}`,
        why: `The link expired at ${new Date(link.expiresAt!).toISOString()}${expiredUrl === undefined ? ' and has no expiredUrl.' : ': its expiredUrl.'}`,
      };
    }
    if (getsPreview(answers, userAgent)) {
      const { route } = explainRoute(link, 'desktop');
      return {
        visitor: name,
        goesTo: `200, the preview card "${link.socialPreview!.title}"${route.kind === 'redirect' ? `, with a link to ${route.location}` : ''}`,
        why: 'A link-preview crawler, and the link has a socialPreview: counted as a preview, not a click.',
      };
    }
    const platform = detectPlatform(userAgent);
    const crawlerNote =
      name === 'Link-preview crawler' ? 'The link has no socialPreview: crawlers are redirected like people (as desktop). ' : '';
    if (linkAnswer(answers, platform, userAgent).kind === 'unavailable') {
      return {
        visitor: name,
        goesTo: '404, the "Link not found" page',
        why: `${crawlerNote}No rule gives a safe destination: defaultUrl is not a usable http(s) URL.`,
      };
    }
    const ipad = platform === 'ios' && hasIpadRoute(link) && isIpad(userAgent);
    const { route, reason } = explainRoute(link, platform, { installToken: TOKEN_STAND_IN, ipad });
    return { visitor: name, ...routeInWords(route, reason, hasApp, link), why: crawlerNote + reasonInWords(reason, link) };
  });
  if (link.clickCap === undefined || expired) return cases;
  const overflow = parseWebUrl(link.capOverflowUrl)?.href;
  return [
    ...cases,
    {
      visitor: `Every visitor after ${link.clickCap} clicks`,
      goesTo: overflow === undefined ? '410, the "Link expired" page' : `302 to ${overflow}`,
      why: `The link has a click cap of ${link.clickCap}: once that many clicks have reached it, link-preview crawlers still get their page, everyone else goes here (not a click).`,
    },
  ];
}

function routeInWords(route: ReturnType<typeof explainRoute>['route'], reason: RouteReason, hasApp: boolean | undefined, link: CachedLink) {
  if (reason.rule === 'android-app') {
    return {
      goesTo: hasApp
        ? `302 to Chrome's intent: the app ${reason.appPackage} opens ${reason.appUrl}`
        : `302 to Chrome's intent, whose fallback is ${reason.fallbackUrl}`,
    };
  }
  if (route.kind === 'app-page') {
    const store = route.toStore === true;
    const delay = APP_PAGE_FALLBACK_DELAY_MS / 1000;
    return {
      goesTo:
        `200, the "Open in the app" page: it opens ${route.appUrl}; without the app, ` +
        (store
          ? `it stays, with a button to ${route.fallbackUrl} that copies the install token first`
          : `it goes on to ${route.fallbackUrl} after ${delay} s`),
    };
  }
  if (route.kind === 'redirect') {
    const sameForApp = hasApp !== undefined && link.androidLink === undefined ? ' (the same with or without the app)' : '';
    return { goesTo: `302 to ${route.location}${sameForApp}` };
  }
  return { goesTo: '404, the "Link not found" page' };
}

const FALLBACK_WORDS = {
  'android-app': {
    link: 'visitors without the app go to androidLink.fallbackUrl',
    store:
      'androidLink has no fallbackUrl, so visitors without the app go to the Play Store page of the package, with the install token in its referrer',
  },
  'ios-app': {
    ipad: 'visitors on an iPad without the app go to iosLink.ipadFallbackUrl',
    link: 'visitors without the app go to iosLink.fallbackUrl',
    store: 'iosLink has no fallbackUrl, so visitors without the app go to the App Store page of the registered app (its appStoreId)',
    'default-url':
      'iosLink has no fallbackUrl and no registered app with an App Store id matches its bundle id, so visitors without the app go to defaultUrl',
  },
} as const;

function reasonInWords(reason: RouteReason, link: CachedLink): string {
  const passed =
    reason.passedOver === undefined ? '' : `${reason.passedOver} is set, but its URL is not safe to send anyone to, so it is passed over. `;
  const params = link.customParameters === undefined ? '' : ' customParameters are appended to it.';
  switch (reason.rule) {
    case 'android-app':
      return `androidLink is set: Android gets Chrome's intent for ${reason.appPackage} (androidLink.url); ${FALLBACK_WORDS['android-app'][reason.fallbackFrom]}.`;
    case 'ios-app':
      return `iosLink is set: iOS gets the page that tries iosLink.url first; ${FALLBACK_WORDS['ios-app'][reason.fallbackFrom]}.`;
    case 'ios-forced-redirect':
      return `iosLink is set with skipAppPage: iOS goes straight on, with no page (an installed app opens before any request when the domain is associated with it); ${FALLBACK_WORDS['ios-app'][reason.fallbackFrom]}.`;
    case 'desktop-url':
      return `${passed}desktopUrl is set: desktop visitors go there.${params}`;
    case 'default-url':
      return `${passed}No rule of this platform applies${link.androidLink || link.iosLink || link.desktopUrl ? ' (the link’s app and desktop fields are for other platforms)' : ''}: defaultUrl.${params}`;
    default:
      return `${passed}No rule gives a safe destination.`;
  }
}

/** The app's last App SDK call seen, by its key (see POST /api/app/open and /api/app/install). */
export interface SdkCall {
  platform: 'ios' | 'android';
  /** The bundle id or package name. */
  app: string;
  call: 'open' | 'install' | null;
  at: Date | null;
}

/** Everything the page shows about a link. */
export interface DebugFacts {
  brand: string;
  shortUrl: string;
  /** undefined: no link has this code on this domain. */
  cases: VisitorCase[] | undefined;
  checks: FileCheck[];
  sdkCalls: SdkCall[];
  /** Apps the link opens that the owner has not registered, each with its platform: no SDK call can be shown for them. */
  unregistered: string[];
}

const STYLE =
  `:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1f2328;--muted:#59636e;--ok:#1a7f37;--bad:#cf222e;--note:#9a6700}` +
  `@media(prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#1b1e24;--text:#e6e8eb;--muted:#9aa3ad;--ok:#3fb950;--bad:#f85149;--note:#d29922}}` +
  `body{margin:0;background:var(--bg);color:var(--text);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:1rem}` +
  `main{max-width:60rem;margin:0 auto;background:var(--card);border-radius:.8rem;padding:1.25rem 1.5rem}` +
  `h1{font-size:1.3rem;margin:0 0 .25rem;overflow-wrap:anywhere}h2{font-size:1.05rem;margin:1.5rem 0 .5rem}` +
  `p{margin:.25rem 0 .75rem;color:var(--muted)}table{border-collapse:collapse;width:100%}` +
  `th,td{text-align:left;vertical-align:top;padding:.5rem;border-top:1px solid var(--bg);overflow-wrap:anywhere}` +
  `tbody th{width:11rem}ul{margin:.25rem 0 .75rem;padding-left:1.25rem}` +
  `.ok{color:var(--ok)}.problem{color:var(--bad)}.note{color:var(--note)}footer{text-align:center;color:var(--muted);font-size:.8rem;margin-top:1rem}`;

/** The page's policy: its own style by hash, nothing else at all (no script), no framing, no forms. */
export const DEBUG_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const LEVEL_WORDS: Record<Finding['level'], string> = { ok: 'OK', problem: 'Problem', note: 'Note' };
const FILE_NAMES = { apple: 'apple-app-site-association (iOS Universal Links)', android: 'assetlinks.json (Android App Links)' } as const;

/** The page, every value escaped. */
export function renderDebugPage(facts: DebugFacts): string {
  const e = escapeHtml;
  const cases =
    facts.cases === undefined
      ? `<p class="problem" id="unknown">No link has this code on this domain: visitors get the "Link not found" page (or the domain's not-found URL).</p>`
      : `<table id="cases"><thead><tr><th>Visitor</th><th>Goes to</th><th>Why</th></tr></thead><tbody>${facts.cases
          .map((c) => `<tr><th>${e(c.visitor)}</th><td>${e(c.goesTo)}</td><td>${e(c.why)}</td></tr>`)
          .join('')}</tbody></table>`;
  const checks = facts.checks
    .map(
      (check) =>
        `<h2>${e(FILE_NAMES[check.file])}</h2><p>${e(check.url)}</p><ul class="findings" data-file="${check.file}">${check.findings
          .map((finding) => `<li class="${finding.level}">${LEVEL_WORDS[finding.level]}: ${e(finding.text)}</li>`)
          .join('')}</ul>`,
    )
    .join('');
  const calls = [
    ...facts.sdkCalls.map(
      (call) =>
        `<li>${e(call.app)} (${call.platform === 'ios' ? 'iOS' : 'Android'}): ${
          call.at === null || call.call === null
            ? 'no call with its app key seen yet'
            : `last call POST /api/app/${call.call} at ${e(call.at.toISOString().slice(0, 16).replace('T', ' '))} UTC`
        }</li>`,
    ),
    ...facts.unregistered.map((app) => `<li>${e(app)}: not registered by the link's owner, so its SDK calls cannot be seen</li>`),
  ];
  const body =
    `<h1>${e(facts.shortUrl)}</h1><p>Where each kind of visitor goes, worked out by the redirect's own rules. This page is not a click.</p>` +
    cases +
    (facts.cases === undefined
      ? ''
      : `<p>With a verified association file (below), iOS and Android open the installed app with the short URL itself, before any of the above.</p>`) +
    checks +
    (calls.length === 0 ? '' : `<h2>App SDK</h2><ul id="sdk">${calls.join('')}</ul>`);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>Debug · ${e(facts.shortUrl)} · ${e(facts.brand)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main><footer>${e(facts.brand)}</footer></body></html>`
  );
}
