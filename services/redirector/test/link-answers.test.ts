import type { RecognizedString } from 'uws-bundled';
import { describe, expect, it } from 'vitest';
import { renderAppPage } from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { linkAnswer, noAnswers, type LinkAnswer } from '../src/link-answers.js';

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

describe('linkAnswer', () => {
  it('builds each platform answer of a record once and keeps it with the record', () => {
    const record = link({ desktopUrl: 'https://example.com/desktop', customParameters: { utm_source: 'mail' } });
    const answers = noAnswers();
    const desktop = linkAnswer(record, answers, 'desktop');
    expect(readable(desktop)).toEqual({ kind: 'redirect', location: 'https://example.com/desktop?utm_source=mail' });
    expect(answers.desktop).toBe(desktop);
    expect(linkAnswer(record, answers, 'desktop')).toBe(desktop);
    expect(answers.android).toBeUndefined();
    expect(readable(linkAnswer(record, answers, 'android'))).toEqual({
      kind: 'redirect',
      location: 'https://example.com/landing?utm_source=mail',
    });
  });

  it('renders the iOS app page once, with the app and fallback URLs', () => {
    const record = link({ iosLink: { url: 'myapp://item/7', bundleId: 'com.example.app' } });
    const answers = noAnswers();
    const answer = linkAnswer(record, answers, 'ios');
    expect(readable(answer)).toEqual({ kind: 'app-page', body: renderAppPage('myapp://item/7', 'https://example.com/landing') });
    expect(linkAnswer(record, answers, 'ios')).toBe(answer);
  });

  it('has no answer for a record without a safe destination', () => {
    expect(linkAnswer(link({ defaultUrl: 'javascript:alert(1)' }), noAnswers(), 'desktop')).toEqual({ kind: 'unavailable' });
  });
});
