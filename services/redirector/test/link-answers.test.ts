import { describe, expect, it } from 'vitest';
import type { CachedLink } from '@deeplink/core/redis/link-cache';
import { renderAppPage } from '@deeplink/core/routing/pages';
import { linkAnswer } from '../src/link-answers.js';

const link = (fields: Partial<CachedLink> = {}): CachedLink => ({
  id: '0b8f3c1e-0000-4000-8000-000000000001',
  defaultUrl: 'https://example.com/landing',
  ...fields,
});

describe('linkAnswer', () => {
  it('builds each platform answer of a record once and keeps it', () => {
    const record = link({ desktopUrl: 'https://example.com/desktop', customParameters: { utm_source: 'mail' } });
    const desktop = linkAnswer(record, 'desktop');
    expect(desktop).toEqual({ kind: 'redirect', location: 'https://example.com/desktop?utm_source=mail' });
    expect(linkAnswer(record, 'desktop')).toBe(desktop);
    expect(linkAnswer(record, 'android')).toEqual({ kind: 'redirect', location: 'https://example.com/landing?utm_source=mail' });
  });

  it('answers a replaced record (an edited link) from the new record, not the old one', () => {
    const before = link();
    expect(linkAnswer(before, 'desktop')).toEqual({ kind: 'redirect', location: 'https://example.com/landing' });
    const after = link({ defaultUrl: 'https://example.com/moved' });
    expect(linkAnswer(after, 'desktop')).toEqual({ kind: 'redirect', location: 'https://example.com/moved' });
  });

  it('renders the iOS app page once, with the app and fallback URLs', () => {
    const record = link({ iosLink: { url: 'myapp://item/7', bundleId: 'com.example.app' } });
    const answer = linkAnswer(record, 'ios');
    expect(answer).toEqual({ kind: 'app-page', body: renderAppPage('myapp://item/7', 'https://example.com/landing') });
    expect(linkAnswer(record, 'ios')).toBe(answer);
  });

  it('has no answer for a record without a safe destination', () => {
    expect(linkAnswer(link({ defaultUrl: 'javascript:alert(1)' }), 'desktop')).toEqual({ kind: 'unavailable' });
  });
});
