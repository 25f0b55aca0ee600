import type { RecognizedString } from 'uws-bundled';
import { describe, expect, it } from 'vitest';
import { findInstallToken, newInstallToken, renderAppPage } from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { UA } from '@deeplink/test-kit/user-agents';
import { answersBytes, buildAnswers, linkAnswer, noAnswers, type LinkAnswer } from '../src/link-answers.js';

const link = (fields: Partial<CachedLink> = {}): CachedLink => ({
  id: '0b8f3c1e-0000-4000-8000-000000000001',
  defaultUrl: 'https://example.com/landing',
  ...fields,
});

/** An answer with its texts decoded, to compare with what is expected. */
function readable(answer: LinkAnswer) {
  const text = (value: RecognizedString) => (typeof value === 'string' ? value : Buffer.from(value as ArrayBuffer).toString());
  if (answer.kind === 'redirect') return { kind: answer.kind, location: text(answer.location) };
  if (answer.kind === 'app-page') return { kind: answer.kind, body: text(answer.body) };
  return answer;
}

const SHORT_URL = 'https://go.example.com/spring';

describe('linkAnswer', () => {
  it('answers each platform with what buildAnswers prepared for the record', () => {
    const record = link({ desktopUrl: 'https://example.com/desktop', customParameters: { utm_source: 'mail' } });
    const answers = buildAnswers(record, SHORT_URL);
    const desktop = linkAnswer(answers, 'desktop');
    expect(readable(desktop)).toEqual({ kind: 'redirect', location: 'https://example.com/desktop?utm_source=mail' });
    expect(linkAnswer(answers, 'desktop')).toBe(desktop);
    expect(readable(linkAnswer(answers, 'android'))).toEqual({
      kind: 'redirect',
      location: 'https://example.com/landing?utm_source=mail',
    });
    expect(desktop.kind === 'redirect' && desktop.minted).toBeUndefined();
  });

  it('renders the iOS app page once, with the app and fallback URLs', () => {
    const record = link({ iosLink: { url: 'myapp://item/7', bundleId: 'com.example.app' } });
    const answer = linkAnswer(buildAnswers(record, SHORT_URL), 'ios');
    expect(readable(answer)).toEqual({ kind: 'app-page', body: renderAppPage('myapp://item/7', 'https://example.com/landing') });
  });

  it("answers iPads with the link's iPad route only when it has one", () => {
    const iosLink = { url: 'myapp://item/7', bundleId: 'com.example.app', fallbackUrl: 'https://example.com/ios' };
    const plain = buildAnswers(link({ iosLink }), SHORT_URL);
    expect(plain.ipad).toBeUndefined();
    expect(linkAnswer(plain, 'ios', UA.ipadSafari)).toBe(plain.ios);
    const apart = buildAnswers(link({ iosLink: { ...iosLink, ipadFallbackUrl: 'https://example.com/ipad' } }), SHORT_URL);
    expect(readable(linkAnswer(apart, 'ios', UA.ipadSafari))).toEqual({
      kind: 'app-page',
      body: renderAppPage('myapp://item/7', 'https://example.com/ipad'),
    });
    expect(linkAnswer(apart, 'ios', UA.ipadDesktopModeWebView)).toBe(apart.ipad);
    expect(linkAnswer(apart, 'ios', UA.iphoneSafari)).toBe(apart.ios);
    expect(answersBytes(apart)).toBeGreaterThan(answersBytes(plain));
  });

  it('redirects iOS without the app page when the link skips it', () => {
    const record = link({
      iosLink: { url: 'myapp://item/7', bundleId: 'com.example.app', fallbackUrl: 'https://example.com/ios', skipAppPage: true },
    });
    expect(readable(linkAnswer(buildAnswers(record, SHORT_URL), 'ios', UA.iphoneSafari))).toEqual({
      kind: 'redirect',
      location: 'https://example.com/ios',
    });
  });

  it('has no answer for a record without a safe destination, nor for an unknown code', () => {
    expect(linkAnswer(buildAnswers(link({ defaultUrl: 'javascript:alert(1)' }), SHORT_URL), 'desktop')).toEqual({ kind: 'unavailable' });
    expect(linkAnswer(noAnswers(), 'android')).toEqual({ kind: 'unavailable' });
  });
});

describe('store answers', () => {
  /** The answer's text with `token` in its slot, decoded. */
  const filled = (answer: LinkAnswer, token: string) => {
    if (answer.kind === 'unavailable' || answer.minted === undefined) throw new Error('not a minting answer');
    const text = answer.minted.fill(token);
    return typeof text === 'string' ? text : Buffer.from(text as ArrayBuffer).toString();
  };

  it("prepare the Play Store intent around a slot that takes each visit's token, the rest of the bytes unchanged", () => {
    const answer = linkAnswer(
      buildAnswers(link({ androidLink: { url: 'shop://x', appPackageName: 'com.example.shop' } }), SHORT_URL),
      'android',
    );
    expect(answer).toMatchObject({ kind: 'redirect', store: 'ANDROID' });
    const first = newInstallToken();
    const second = newInstallToken();
    const one = filled(answer, first);
    const two = filled(answer, second);
    expect(one.replace(first, second)).toBe(two);
    const play = new URL(decodeURIComponent(/S\.browser_fallback_url=([^;]*)/.exec(two)![1]!));
    expect(findInstallToken(play.searchParams.get('referrer')!)).toBe(second);
    // Same length every time: a HEAD's Content-Length and the cache's weight hold for every visit.
    expect(Buffer.byteLength(two)).toBe(Buffer.byteLength(one));
  });

  it('put the token into the iOS page only when its fallback is a store', () => {
    const apps = { iosApp: { appStoreId: '123', name: 'Acme' } } as Partial<CachedLink>;
    const store = linkAnswer(buildAnswers(link({ iosLink: { url: 'myapp://x', bundleId: 'com.example.app' }, ...apps }), SHORT_URL), 'ios');
    const token = newInstallToken();
    expect(filled(store, token)).toContain(`data-copy="${SHORT_URL}?dl_token=${token}"`);
    const web = linkAnswer(
      buildAnswers(link({ iosLink: { url: 'myapp://x', bundleId: 'com.example.app', fallbackUrl: 'https://example.com/ios' } }), SHORT_URL),
      'ios',
    );
    expect(web).toMatchObject({ kind: 'app-page', minted: undefined, store: undefined });
  });
});
