// The debug page's cases: where each kind of visitor goes, as the redirect's own rules decide.
import { describe, expect, it } from 'vitest';
import type { CachedLink } from '@deeplink/core/redis';
import { renderDebugPage, visitorCases } from '../src/debug-page.js';

const NOW = Date.parse('2026-11-25T10:00:00Z');
const SHORT_URL = 'https://go.example.com/spring';

const link = (fields: Partial<CachedLink> = {}): CachedLink => ({
  id: '0b8f3c1e-0000-4000-8000-000000000001',
  defaultUrl: 'https://example.com/landing',
  ...fields,
});

/** The cases as visitor → [goes to, why]. */
const casesOf = (record: CachedLink, now = NOW) =>
  Object.fromEntries(visitorCases(record, SHORT_URL, now).map((c) => [c.visitor, [c.goesTo, c.why]]));

describe('visitorCases', () => {
  it('covers the six kinds of visitor, in order', () => {
    expect(visitorCases(link(), SHORT_URL, NOW).map((c) => c.visitor)).toEqual([
      'Android, app installed',
      'Android, app not installed',
      'iPhone',
      'iPad',
      'Desktop',
      'Link-preview crawler',
    ]);
  });

  it("shows the iPad's own destinations, and a forced redirect's missing page", () => {
    const cases = casesOf(
      link({
        iosLink: {
          url: 'shop://item/7',
          bundleId: 'com.example.shop',
          fallbackUrl: 'https://example.com/ios',
          ipadFallbackUrl: 'https://example.com/ipad',
          skipAppPage: true,
        },
      }),
    );
    expect(cases.iPhone![0]).toBe('302 to https://example.com/ios');
    expect(cases.iPhone![1]).toMatch(/^iosLink is set with skipAppPage: iOS goes straight on, with no page/);
    expect(cases.iPad![0]).toBe('302 to https://example.com/ipad');
    expect(cases.iPad![1]).toMatch(/visitors on an iPad without the app go to iosLink\.ipadFallbackUrl\.$/);
  });

  it('sends everyone to defaultUrl when the link has nothing else, and says so', () => {
    const cases = casesOf(link({ customParameters: { utm_source: 'mail' } }));
    for (const visitor of ['iPhone', 'iPad', 'Desktop']) {
      expect(cases[visitor]![0]).toBe('302 to https://example.com/landing?utm_source=mail');
      expect(cases[visitor]![1]).toBe('No rule of this platform applies: defaultUrl. customParameters are appended to it.');
    }
    expect(cases['Android, app installed']![0]).toBe(
      '302 to https://example.com/landing?utm_source=mail (the same with or without the app)',
    );
    expect(cases['Link-preview crawler']![1]).toMatch(/^The link has no socialPreview: crawlers are redirected like people/);
  });

  it('shows the Android app, its fallback, the iOS page and the desktop URL, each with its rule', () => {
    const cases = casesOf(
      link({
        androidLink: { url: 'shop://item/7', appPackageName: 'com.example.shop' },
        iosLink: { url: 'shop://item/7', bundleId: 'com.example.shop', fallbackUrl: 'https://example.com/ios' },
        desktopUrl: 'https://example.com/desktop',
        socialPreview: { title: 'Spring sale' },
      }),
    );
    expect(cases['Android, app installed']).toEqual([
      "302 to Chrome's intent: the app com.example.shop opens shop://item/7",
      "androidLink is set: Android gets Chrome's intent for com.example.shop (androidLink.url); androidLink has no fallbackUrl, so visitors without the app go to the Play Store page of the package, with the install token in its referrer.",
    ]);
    expect(cases['Android, app not installed']![0]).toBe(
      "302 to Chrome's intent, whose fallback is https://play.google.com/store/apps/details?id=com.example.shop&referrer=dl_token%3DVISIT_INSTALL_TOKEN",
    );
    expect(cases.iPhone![0]).toBe(
      '200, the "Open in the app" page: it opens shop://item/7; without the app, it goes on to https://example.com/ios after 1.5 s',
    );
    expect(cases.iPad).toEqual(cases.iPhone);
    expect(cases.iPhone![1]).toBe(
      'iosLink is set: iOS gets the page that tries iosLink.url first; visitors without the app go to iosLink.fallbackUrl.',
    );
    expect(cases.Desktop).toEqual(['302 to https://example.com/desktop', 'desktopUrl is set: desktop visitors go there.']);
    expect(cases['Link-preview crawler']).toEqual([
      '200, the preview card "Spring sale", with a link to https://example.com/desktop',
      'A link-preview crawler, and the link has a socialPreview: counted as a preview, not a click.',
    ]);
  });

  it('says the iOS page keeps a store fallback for a tap, and where the fallback came from', () => {
    const cases = casesOf(link({ iosLink: { url: 'shop://x', bundleId: 'com.example.shop' }, iosApp: { appStoreId: '123456' } }));
    expect(cases.iPhone![0]).toBe(
      '200, the "Open in the app" page: it opens shop://x; without the app, it stays, with a button to https://apps.apple.com/app/id123456 that copies the install token first',
    );
    expect(cases.iPhone![1]).toMatch(/App Store page of the registered app \(its appStoreId\)\.$/);
  });

  it('says when a field is passed over because its URL is unsafe', () => {
    const cases = casesOf(
      link({ desktopUrl: 'javascript:alert(1)', androidLink: { url: 'javascript:x', appPackageName: 'com.example.shop' } }),
    );
    expect(cases.Desktop).toEqual([
      '302 to https://example.com/landing',
      'desktopUrl is set, but its URL is not safe to send anyone to, so it is passed over. No rule of this platform applies (the link’s app and desktop fields are for other platforms): defaultUrl.',
    ]);
    expect(cases['Android, app installed']![1]).toMatch(/^androidLink is set, but its URL is not safe/);
  });

  it('says a link with no safe destination at all answers 404', () => {
    expect(casesOf(link({ defaultUrl: 'data:text/html,x' })).Desktop![0]).toBe('404, the "Link not found" page');
  });

  it('sends everyone to expiredUrl, or the 410 page, once the link has expired', () => {
    const expiresAt = NOW - 1000;
    const withUrl = casesOf(link({ expiresAt, expiredUrl: 'https://example.com/over', socialPreview: { title: 'x' } }));
    for (const [goesTo, why] of Object.values(withUrl)) {
      expect(goesTo).toBe('302 to https://example.com/over');
      expect(why).toBe(`The link expired at ${new Date(expiresAt).toISOString()}: its expiredUrl.`);
    }
    expect(casesOf(link({ expiresAt })).iPhone![0]).toBe('410, the "Link expired" page');
    expect(casesOf(link({ expiresAt: NOW + 1000 })).iPhone![0]).toBe('302 to https://example.com/landing');
  });
});

describe('renderDebugPage', () => {
  const facts = {
    brand: 'Acme <Links>',
    shortUrl: SHORT_URL,
    checks: [],
    sdkCalls: [],
    unregistered: [],
  };

  it('escapes everything the link holds and runs no script', () => {
    const html = renderDebugPage({
      ...facts,
      cases: visitorCases(link({ socialPreview: { title: '<script>alert(1)</script>"' } }), SHORT_URL, NOW),
      checks: [{ file: 'apple', url: 'https://go.example.com/x', findings: [{ level: 'problem', text: 'Content-Type is "<b>".' }] }],
    });
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;');
    expect(html).toContain('Acme &lt;Links&gt;');
    expect(html).toContain('<li class="problem">Problem: Content-Type is &quot;&lt;b&gt;&quot;.</li>');
  });

  it("says when no link has the code, and shows the apps' last SDK calls", () => {
    const html = renderDebugPage({
      ...facts,
      cases: undefined,
      sdkCalls: [
        { platform: 'ios', app: 'com.example.shop', call: 'open', at: new Date('2026-11-25T09:30:12Z') },
        { platform: 'android', app: 'com.example.shop', call: null, at: null },
      ],
      unregistered: ['com.example.other (iOS)'],
    });
    expect(html).toContain('No link has this code on this domain');
    expect(html).toContain('com.example.shop (iOS): last call POST /api/app/open at 2026-11-25 09:30 UTC');
    expect(html).toContain('com.example.shop (Android): no call with its app key seen yet');
    expect(html).toContain("com.example.other (iOS): not registered by the link's owner");
  });
});
