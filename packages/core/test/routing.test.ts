import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { CachedLink } from '../src/redis/link-cache.js';
import { createHash } from 'node:crypto';
import { GONE_PAGE, NOT_FOUND_PAGE, PAGE_CSP, renderAppPage } from '../src/routing/pages.js';
import { detectPlatform, isIpad } from '../src/routing/platform.js';
import { findInstallToken, newInstallToken } from '../src/apps/install-tokens.js';
import {
  hasIpadRoute,
  isExpired,
  isPlayStoreUrl,
  isStoreUrl,
  oversizedDestinations,
  routeFor,
  withInstallReferrer,
} from '../src/routing/resolve-destination.js';
import { UA } from '@deeplink/test-kit/user-agents';

describe('detectPlatform', () => {
  it.each([
    ['androidChrome', 'android'],
    ['androidReduced', 'android'],
    ['androidTablet', 'android'],
    ['iphoneSafari', 'ios'],
    ['iphoneChrome', 'ios'],
    ['ipadSafari', 'ios'],
    ['ipod', 'ios'],
    ['ipadDesktopModeWebView', 'ios'],
    ['windowsChrome', 'desktop'],
    ['linuxFirefox', 'desktop'],
    ['macSafari', 'desktop'],
    ['googlebot', 'desktop'],
    ['curl', 'desktop'],
  ] as const)('%s → %s', (agent, platform) => {
    expect(detectPlatform(UA[agent])).toBe(platform);
  });

  it('tells iPads from the other iOS agents', () => {
    expect(isIpad(UA.ipadSafari)).toBe(true);
    expect(isIpad(UA.ipadDesktopModeWebView)).toBe(true);
    for (const agent of ['iphoneSafari', 'iphoneChrome', 'ipod'] as const) expect(isIpad(UA[agent]), agent).toBe(false);
  });

  it('treats a missing agent as desktop', () => {
    expect(detectPlatform('')).toBe('desktop');
  });
});

const NOW = Date.parse('2026-06-01T12:00:00Z');

const full: CachedLink = {
  id: 'link-1',
  defaultUrl: 'https://example.com/landing',
  androidLink: {
    url: 'myapp://product/42?ref=share',
    appPackageName: 'com.example.app',
    minimumVersion: '2.4.1',
    fallbackUrl: 'https://example.com/android?x=1',
  },
  iosLink: {
    url: 'myapp://product/42',
    bundleId: 'com.example.app',
    minimumVersion: '3.0',
    fallbackUrl: 'https://example.com/ios',
  },
  desktopUrl: 'https://example.com/desktop',
};

/** Splits an intent URL into its data part and its extras. */
function parseIntent(location: string) {
  const match = /^intent:(.*)#Intent;(.*);end$/.exec(location);
  expect(match, location).not.toBeNull();
  const extras = Object.fromEntries(
    match![2]!.split(';').map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), decodeURIComponent(pair.slice(at + 1))];
    }),
  );
  return { data: match![1]!, extras };
}

describe('routeFor', () => {
  it('sends Android to an intent URL with package, fallback and minimum version', () => {
    const destination = routeFor(full, 'android');
    expect(destination.kind).toBe('redirect');
    const { data, extras } = parseIntent((destination as { location: string }).location);
    expect(data).toBe('//product/42?ref=share');
    expect(extras).toEqual({
      scheme: 'myapp',
      package: 'com.example.app',
      'S.browser_fallback_url': 'https://example.com/android?x=1',
      'S.min_version': '2.4.1',
    });
  });

  it('falls back to the Play Store page inside the intent when Android has no fallbackUrl', () => {
    const link: CachedLink = { ...full, androidLink: { url: 'myapp://home', appPackageName: 'com.example.app' } };
    const { extras } = parseIntent((routeFor(link, 'android') as { location: string }).location);
    expect(extras['S.browser_fallback_url']).toBe('https://play.google.com/store/apps/details?id=com.example.app');
    expect(extras['S.min_version']).toBeUndefined();
  });

  it('uses the intent form for http(s) App Links too', () => {
    const link: CachedLink = {
      ...full,
      androidLink: { url: 'https://app.example.com/p/7?a=b#frag', appPackageName: 'com.example.app' },
    };
    const { data, extras } = parseIntent((routeFor(link, 'android') as { location: string }).location);
    expect(data).toBe('//app.example.com/p/7?a=b');
    expect(extras.scheme).toBe('https');
  });

  it('keeps a separator in the fallback URL from ending the intent extras', () => {
    const link: CachedLink = {
      ...full,
      androidLink: { url: 'myapp://x', appPackageName: 'com.example.app', fallbackUrl: 'https://e.com/a;end?q=1;2' },
    };
    const location = (routeFor(link, 'android') as { location: string }).location;
    expect(location.split(';end')).toHaveLength(2);
    expect(parseIntent(location).extras['S.browser_fallback_url']).toBe('https://e.com/a;end?q=1;2');
  });

  it('sends iOS to the app page with min_version on the app URL and the iOS fallback', () => {
    expect(routeFor(full, 'ios')).toEqual({
      kind: 'app-page',
      appUrl: 'myapp://product/42?min_version=3.0',
      fallbackUrl: 'https://example.com/ios',
    });
  });

  it('falls back to defaultUrl on the iOS page when iOS has no fallbackUrl', () => {
    const link: CachedLink = { ...full, iosLink: { url: 'myapp://product/42?a=1', bundleId: 'com.example.app' } };
    expect(routeFor(link, 'ios')).toEqual({
      kind: 'app-page',
      appUrl: 'myapp://product/42?a=1',
      fallbackUrl: 'https://example.com/landing',
    });
  });

  describe('iPads and forced redirects', () => {
    const ipadLink: CachedLink = {
      ...full,
      iosLink: {
        ...full.iosLink!,
        ipadUrl: 'mypadapp://product/42',
        ipadBundleId: 'com.example.pad',
        ipadFallbackUrl: 'https://example.com/ipad',
      },
    };

    it("sends iPads to the iPad app, with the iPad fallback, and iPhones to the iPhone's", () => {
      expect(routeFor(ipadLink, 'ios', { ipad: true })).toEqual({
        kind: 'app-page',
        appUrl: 'mypadapp://product/42?min_version=3.0',
        fallbackUrl: 'https://example.com/ipad',
      });
      expect(routeFor(ipadLink, 'ios')).toEqual(routeFor(full, 'ios'));
    });

    it("keeps the iPhone's app or fallback where the iPad has none of its own", () => {
      const fallbackOnly: CachedLink = { ...full, iosLink: { ...full.iosLink!, ipadFallbackUrl: 'https://example.com/ipad' } };
      expect(routeFor(fallbackOnly, 'ios', { ipad: true })).toMatchObject({
        appUrl: 'myapp://product/42?min_version=3.0',
        fallbackUrl: 'https://example.com/ipad',
      });
      expect(routeFor(full, 'ios', { ipad: true })).toEqual(routeFor(full, 'ios'));
    });

    it('tells which links route iPads apart', () => {
      expect(hasIpadRoute(ipadLink)).toBe(true);
      expect(hasIpadRoute({ ...full, iosLink: { ...full.iosLink!, ipadFallbackUrl: 'https://example.com/ipad' } })).toBe(true);
      expect(hasIpadRoute(full)).toBe(false);
      expect(hasIpadRoute({ id: 'l', defaultUrl: 'https://example.com/' })).toBe(false);
    });

    it('redirects iOS straight to the fallback, without the app page, when skipAppPage is set', () => {
      const forced: CachedLink = { ...ipadLink, iosLink: { ...ipadLink.iosLink!, skipAppPage: true } };
      expect(routeFor(forced, 'ios')).toEqual({ kind: 'redirect', location: 'https://example.com/ios' });
      expect(routeFor(forced, 'ios', { ipad: true })).toEqual({ kind: 'redirect', location: 'https://example.com/ipad' });
      const toStore: CachedLink = {
        ...full,
        iosLink: { url: 'myapp://x', bundleId: 'com.example.app', skipAppPage: true },
        iosApp: { appStoreId: '123' },
      };
      expect(routeFor(toStore, 'ios')).toEqual({ kind: 'redirect', location: 'https://apps.apple.com/app/id123', toStore: true });
      // Other platforms are left alone.
      expect(routeFor(forced, 'android')).toEqual(routeFor(full, 'android'));
    });

    it('measures the iPad destinations too', () => {
      const long: CachedLink = {
        ...ipadLink,
        iosLink: { ...ipadLink.iosLink!, ipadFallbackUrl: `https://example.com/${'a'.repeat(3000)}` },
      };
      expect(oversizedDestinations(long, 2048)).toEqual([{ field: 'iosLink', message: expect.stringContaining('longer than 2048 bytes') }]);
    });
  });

  it('sends desktop to desktopUrl', () => {
    expect(routeFor(full, 'desktop')).toEqual({ kind: 'redirect', location: 'https://example.com/desktop' });
  });

  it('sends every platform without its own destination to defaultUrl', () => {
    const bare: CachedLink = { id: 'l', defaultUrl: 'https://example.com/only' };
    for (const platform of ['android', 'ios', 'desktop'] as const) {
      expect(routeFor(bare, platform)).toEqual({ kind: 'redirect', location: 'https://example.com/only' });
    }
    // A desktop URL is for desktops only.
    const desktopOnly: CachedLink = { ...bare, desktopUrl: 'https://example.com/desk' };
    expect(routeFor(desktopOnly, 'android')).toEqual({ kind: 'redirect', location: 'https://example.com/only' });
    expect(routeFor(desktopOnly, 'ios')).toEqual({ kind: 'redirect', location: 'https://example.com/only' });
  });

  it('counts a link as expired at and after its expiry, not before, and never without one', () => {
    const link: CachedLink = { ...full, expiresAt: NOW };
    expect([isExpired(link, NOW - 1), isExpired(link, NOW), isExpired(link, NOW + 1)]).toEqual([false, true, true]);
    expect(isExpired({ ...full, expiresAt: undefined }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  describe('customParameters', () => {
    const params = { utm_source: 'newsletter', utm_campaign: 'spring sale', x: 'ignored' };
    const link: CachedLink = { ...full, customParameters: params };

    it('are appended to web destinations without overwriting existing parameters', () => {
      expect(routeFor(link, 'desktop')).toEqual({
        kind: 'redirect',
        location: 'https://example.com/desktop?utm_source=newsletter&utm_campaign=spring%20sale&x=ignored',
      });
      const withQuery: CachedLink = {
        id: 'l',
        defaultUrl: 'https://example.com/p?utm_source=site&q=a%20b#top',
        customParameters: params,
      };
      expect(routeFor(withQuery, 'desktop')).toEqual({
        kind: 'redirect',
        location: 'https://example.com/p?utm_source=site&q=a%20b&utm_campaign=spring%20sale&x=ignored#top',
      });
    });

    it('go into the Android browser fallback but not into the app URL', () => {
      const { data, extras } = parseIntent((routeFor(link, 'android') as { location: string }).location);
      expect(data).toBe('//product/42?ref=share');
      expect(extras['S.browser_fallback_url']).toBe('https://example.com/android?x=1&utm_source=newsletter&utm_campaign=spring%20sale');
    });

    it('go into the iOS fallback but not into the app URL', () => {
      expect(routeFor(link, 'ios')).toEqual({
        kind: 'app-page',
        appUrl: 'myapp://product/42?min_version=3.0',
        fallbackUrl: 'https://example.com/ios?utm_source=newsletter&utm_campaign=spring%20sale&x=ignored',
      });
    });
  });

  describe('unsafe URLs in the cache', () => {
    it('never produce a javascript:, data:, vbscript: or file: destination', () => {
      const bad = ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:text/html,<b>x</b>', 'vbscript:msgbox(1)', 'file:///etc/passwd'];
      for (const url of bad) {
        const link: CachedLink = {
          id: 'l',
          defaultUrl: 'https://example.com/safe',
          desktopUrl: url,
          androidLink: { url, appPackageName: 'com.example.app', fallbackUrl: url },
          iosLink: { url, bundleId: 'com.example.app', fallbackUrl: url },
        };
        for (const platform of ['android', 'ios', 'desktop'] as const) {
          expect(routeFor(link, platform)).toEqual({ kind: 'redirect', location: 'https://example.com/safe' });
        }
      }
    });

    it('use the default fallback when only the platform fallback is unsafe', () => {
      const link: CachedLink = { ...full, iosLink: { url: 'myapp://x', bundleId: 'a.b', fallbackUrl: 'javascript:alert(1)' } };
      expect(routeFor(link, 'ios')).toMatchObject({ fallbackUrl: 'https://example.com/landing' });
    });

    it('make the link unavailable when even defaultUrl is unsafe', () => {
      const link: CachedLink = { id: 'l', defaultUrl: 'javascript:alert(document.cookie)' };
      expect(routeFor(link, 'desktop')).toEqual({ kind: 'unavailable' });
    });

    it('reject URLs carrying raw control characters', () => {
      const link: CachedLink = { id: 'l', defaultUrl: 'https://example.com/ok', desktopUrl: 'https://example.com/\r\nSet-Cookie: a=b' };
      expect(routeFor(link, 'desktop')).toEqual({ kind: 'redirect', location: 'https://example.com/ok' });
    });
  });
});

/** Runs the page's script against a stub browser; returns where it navigated, then where the timer went. */
function runAppPageScript(html: string) {
  const { navigations, timers } = loadAppPageScript(html);
  expect(timers).toHaveLength(1);
  timers[0]!.fn();
  return { navigations, delay: timers[0]!.ms };
}

/**
 * Loads the page's script into a stub browser: where it navigated, the timers it set, what it
 * wrote to the pasteboard, and `tap`, which clicks the store button as a visitor would.
 */
function loadAppPageScript(html: string, clipboard: { writeText(text: string): Promise<void> } | undefined = undefined) {
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  expect(scripts).toHaveLength(1);
  const navigations: string[] = [];
  const timers: { fn: () => void; ms: number }[] = [];
  const location = {
    set href(value: string) {
      navigations.push(value);
    },
    replace: (value: string) => navigations.push(`replace:${value}`),
  };
  const unescapeHtml = (value: string) =>
    value.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
  const clicks: ((event: { preventDefault(): void }) => void)[] = [];
  const getElementById = (id: string) => {
    const tag = new RegExp(`<a [^>]*id="${id}"[^>]*>`).exec(html)?.[0];
    if (tag === undefined) return null;
    const attribute = (name: string) => {
      const value = new RegExp(` ${name}="([^"]*)"`).exec(tag)?.[1];
      return value === undefined ? null : unescapeHtml(value);
    };
    return { getAttribute: attribute, addEventListener: (_: string, fn: (typeof clicks)[number]) => clicks.push(fn) };
  };
  runInNewContext(scripts[0]!, {
    window: { location },
    document: { hidden: false, addEventListener: () => {}, getElementById },
    navigator: { clipboard },
    setTimeout: (fn: () => void, ms: number) => timers.push({ fn, ms }),
    clearTimeout: () => {},
  });
  let prevented = false;
  const tap = () => {
    for (const click of clicks) click({ preventDefault: () => (prevented = true) });
    return prevented;
  };
  return { navigations, timers, tap };
}

describe('renderAppPage', () => {
  it('navigates to the app, then to the fallback after a short delay, and shows both links', () => {
    const html = renderAppPage('myapp://product/42?min_version=3.0', 'https://example.com/ios?a=1&b=2');
    const { navigations, delay } = runAppPageScript(html);
    expect(navigations).toEqual(['myapp://product/42?min_version=3.0', 'replace:https://example.com/ios?a=1&b=2']);
    expect(delay).toBeGreaterThanOrEqual(1000);
    expect(delay).toBeLessThanOrEqual(3000);
    expect(html).toContain('href="myapp://product/42?min_version=3.0"');
    expect(html).toContain('href="https://example.com/ios?a=1&amp;b=2"');
    expect(html).not.toContain('http-equiv="refresh"');
  });

  it('keeps quotes and </script> in URLs from breaking out of the attribute or the script', () => {
    const appUrl = 'myapp://x?q="><script>alert(1)</script>\'';
    const fallbackUrl = 'https://example.com/?q=</script><script>alert(2)</script>&r="\u2028';
    const html = renderAppPage(appUrl, fallbackUrl);
    // Exactly one script element: the page's own.
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    // Attribute values contain no raw quote or angle bracket.
    for (const [, value] of html.matchAll(/href="([^"]*)"/g)) expect(value).not.toMatch(/[<>"']/);
    const { navigations } = runAppPageScript(html);
    expect(navigations).toEqual([appUrl, `replace:${fallbackUrl}`]);
  });
});

describe("the iOS page's store button", () => {
  const copyUrl = 'https://go.example.com/spring?dl_token=AAAAAAAAAAAAAAAAAAAAAA';
  const store = 'https://apps.apple.com/app/id123';

  it('names the store, carries the URL to copy, and never goes to the store on the timer', () => {
    const html = renderAppPage('myapp://x', store, { appName: 'Acme <Shop>', copyUrl: `${copyUrl}&a="b"` });
    expect(html).toContain(
      `id="fallback" href="${store}" data-copy="${copyUrl}&amp;a=&quot;b&quot;">Get Acme &lt;Shop&gt; on the App Store</a>`,
    );
    const { navigations, timers } = loadAppPageScript(html);
    // Only the app is tried; the page then stays, showing the button.
    expect(navigations).toEqual(['myapp://x']);
    expect(timers).toEqual([]);
    expect(renderAppPage('myapp://x', 'https://play.google.com/store/apps/details?id=x', { appName: 'Acme', copyUrl })).toContain(
      '>Get the app</a>',
    );
    expect(renderAppPage('myapp://x', store, { copyUrl })).toContain('>Get the app</a>');
  });

  it('copies the URL on a tap, then opens the store once the copy is done', async () => {
    const copied: string[] = [];
    let done = () => {};
    const clipboard = {
      writeText: (text: string) => {
        copied.push(text);
        return new Promise<void>((resolve) => (done = resolve));
      },
    };
    const { navigations, timers, tap } = loadAppPageScript(renderAppPage('myapp://x', store, { copyUrl }), clipboard);
    expect(copied).toEqual([]);
    expect(tap()).toBe(true); // the link's own navigation waits for the copy
    expect(copied).toEqual([copyUrl]);
    expect(navigations).toEqual(['myapp://x']);
    done();
    await new Promise((resolve) => setImmediate(resolve));
    expect(navigations).toEqual(['myapp://x', store]);
    // The bound on the wait, once the copy went through, navigates no second time.
    expect(timers.map((timer) => timer.ms)).toEqual([300]);
    timers[0]!.fn();
    expect(navigations).toEqual(['myapp://x', store]);
  });

  it('opens the store within 300 ms when the copy hangs, fails or cannot be made', async () => {
    const hanging = loadAppPageScript(renderAppPage('myapp://x', store, { copyUrl }), { writeText: () => new Promise<void>(() => {}) });
    hanging.tap();
    expect(hanging.navigations).toEqual(['myapp://x']);
    expect(hanging.timers.map((timer) => timer.ms)).toEqual([300]);
    hanging.timers[0]!.fn();
    expect(hanging.navigations).toEqual(['myapp://x', store]);

    const refused = loadAppPageScript(renderAppPage('myapp://x', store, { copyUrl }), {
      writeText: () => Promise.reject(new Error('denied')),
    });
    refused.tap();
    await new Promise((resolve) => setImmediate(resolve));
    expect(refused.navigations).toEqual(['myapp://x', store]);

    const none = loadAppPageScript(renderAppPage('myapp://x', store, { copyUrl }));
    none.tap();
    expect(none.navigations).toEqual(['myapp://x', store]);
  });
});

describe("the pages' Content-Security-Policy", () => {
  it("allows exactly the pages' own script and style, by hash, and nothing else", () => {
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    const html = renderAppPage('myapp://a', 'https://example.com/b');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(NOT_FOUND_PAGE)![1]!;
    expect(PAGE_CSP).toContain(`script-src ${hash(script)}`);
    expect(PAGE_CSP).toContain(`style-src ${hash(style)}`);
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).not.toContain('unsafe-inline');
    // The script is the same on every page: the URLs live in the buttons, HTML-escaped.
    expect(/<script>([\s\S]*?)<\/script>/.exec(renderAppPage('other://x', 'https://example.org/'))![1]).toBe(script);
    const storePage = renderAppPage('other://x', 'https://apps.apple.com/app/id1', { copyUrl: 'https://go.example.com/x?dl_token=y' });
    expect(/<script>([\s\S]*?)<\/script>/.exec(storePage)![1]).toBe(script);
  });
});

describe('error pages', () => {
  it('are small HTML documents saying what happened', () => {
    expect(NOT_FOUND_PAGE).toMatch(/^<!doctype html>.*not found/is);
    expect(GONE_PAGE).toMatch(/^<!doctype html>.*expired/is);
    expect(NOT_FOUND_PAGE.length + GONE_PAGE.length).toBeLessThan(4096);
  });
});

describe('install tokens in Play Store URLs', () => {
  const token = newInstallToken();
  /** The install referrer the app reads: Play hands over the `referrer` parameter's value, decoded once. */
  const referrerOf = (playUrl: string) => new URL(playUrl).searchParams.get('referrer')!;

  it('tells Play Store URLs apart: its web page and market:, nothing else', () => {
    expect(isPlayStoreUrl('https://play.google.com/store/apps/details?id=x')).toBe(true);
    expect(isPlayStoreUrl('market://details?id=x')).toBe(true);
    expect(isPlayStoreUrl('https://apps.apple.com/app/id1')).toBe(false);
    expect(isPlayStoreUrl('https://play.google.com.example.com/')).toBe(false);
  });

  it('go into the referrer as one URL-encoded query string, with the utm_* parameters and the token last', () => {
    const url = withInstallReferrer('https://play.google.com/store/apps/details?id=com.example&utm_source=mail', token, {
      utm_source: 'mail',
      utm_campaign: 'spring sale',
      ref: 'x',
    });
    expect(url).toBe(
      `https://play.google.com/store/apps/details?id=com.example&utm_source=mail&referrer=${encodeURIComponent(
        `utm_source=mail&utm_campaign=spring%20sale&dl_token=${token}`,
      )}`,
    );
    expect(url.endsWith(token)).toBe(true);
    expect(referrerOf(url)).toBe(`utm_source=mail&utm_campaign=spring%20sale&dl_token=${token}`);
    expect(findInstallToken(referrerOf(url))).toBe(token);
  });

  it('merge with a referrer already there: its parameters win, except an old token, and the rest of the URL stays', () => {
    const old = 'B'.repeat(22);
    const url = withInstallReferrer(
      `market://details?id=com.example&referrer=${encodeURIComponent(`utm_source=partner&dl_token=${old}&x=a+b`)}&hl=fr#top`,
      token,
      { utm_source: 'mail', utm_medium: 'email' },
    );
    expect(url.startsWith('market://details?id=com.example&hl=fr&referrer=')).toBe(true);
    expect(url.endsWith('#top')).toBe(true);
    const referrer = new URLSearchParams(decodeURIComponent(/referrer=([^&#]*)/.exec(url)![1]!));
    expect([...referrer]).toEqual([
      ['utm_source', 'partner'],
      ['x', 'a b'],
      ['utm_medium', 'email'],
      ['dl_token', token],
    ]);
  });

  it('reach the intent fallback and a redirect to the Play Store on Android only, encoded once more inside the intent', () => {
    const link: CachedLink = {
      id: 'l',
      defaultUrl: 'https://play.google.com/store/apps/details?id=com.example.web',
      androidLink: { url: 'shop://x', appPackageName: 'com.example.shop' },
      customParameters: { utm_source: 'mail' },
    };
    const { location } = routeFor(link, 'android', { installToken: token }) as { location: string };
    const fallback = /S\.browser_fallback_url=([^;]*)/.exec(location)![1]!;
    expect(fallback).toBe(encodeURIComponent(decodeURIComponent(fallback)));
    expect(findInstallToken(referrerOf(decodeURIComponent(fallback)))).toBe(token);
    expect(routeFor(link, 'android')).toEqual({ ...routeFor(link, 'android'), location: location.replace(/%26referrer%3D[^;]*/, '') });

    const direct = routeFor({ ...link, androidLink: undefined }, 'android', { installToken: token }) as { location: string };
    expect(findInstallToken(referrerOf(direct.location))).toBe(token);
    const desktop = routeFor({ ...link, androidLink: undefined }, 'desktop', { installToken: token });
    expect(desktop).toEqual({ kind: 'redirect', location: `${link.defaultUrl}&utm_source=mail`, toStore: true });
    const web = routeFor({ ...link, defaultUrl: 'https://example.com/' }, 'ios', { installToken: token });
    expect(JSON.stringify(web)).not.toContain(token);
  });

  it('count towards the size check of a destination', () => {
    const link: CachedLink = {
      id: 'l',
      defaultUrl: 'https://example.com/',
      androidLink: { url: 'shop://x', appPackageName: 'com.example.shop' },
    };
    const intent = (routeFor(link, 'android', { installToken: token }) as { location: string }).location;
    expect(oversizedDestinations(link, Buffer.byteLength(intent))).toEqual([]);
    expect(oversizedDestinations(link, Buffer.byteLength(intent) - 1).map((problem) => problem.field)).toEqual(['androidLink']);
  });
});

describe('store routes', () => {
  const base: CachedLink = { id: 'l', code: 'c', userId: 'u', defaultUrl: 'https://example.com/' } as CachedLink;

  it('tells store URLs apart: the Play Store, the App Store and market:, nothing else', () => {
    expect(isStoreUrl('https://play.google.com/store/apps/details?id=com.example')).toBe(true);
    expect(isStoreUrl('https://apps.apple.com/app/id123')).toBe(true);
    expect(isStoreUrl('https://itunes.apple.com/app/id123')).toBe(true);
    expect(isStoreUrl('market://details?id=com.example')).toBe(true);
    expect(isStoreUrl('https://example.com/play.google.com')).toBe(false);
    expect(isStoreUrl('https://play.google.com.example.com/')).toBe(false);
  });

  it('marks the Android intent falling back to the Play Store, and not one falling back to a web page', () => {
    const toStore = routeFor({ ...base, androidLink: { url: 'shop://x', appPackageName: 'com.example.shop' } }, 'android');
    expect(toStore).toMatchObject({ kind: 'redirect', toStore: true });
    const toWeb = routeFor(
      { ...base, androidLink: { url: 'shop://x', appPackageName: 'com.example.shop', fallbackUrl: 'https://example.com/app' } },
      'android',
    );
    expect(toWeb).not.toHaveProperty('toStore');
    expect(routeFor(base, 'desktop')).not.toHaveProperty('toStore');
  });

  it('marks the iOS page falling back to the App Store, and a redirect straight to a store', () => {
    const ios = routeFor(
      { ...base, iosLink: { url: 'shop://x', bundleId: 'com.example' }, iosApp: { appStoreId: '123' } } as CachedLink,
      'ios',
    );
    expect(ios).toMatchObject({ kind: 'app-page', toStore: true });
    expect(routeFor({ ...base, defaultUrl: 'https://apps.apple.com/app/id123' }, 'desktop')).toMatchObject({ toStore: true });
  });
});
