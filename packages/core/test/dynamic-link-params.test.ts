import { describe, expect, it } from 'vitest';
import { type DynamicLinkParams, linkFieldsFromDynamicLinkParams, longLinkParams } from '../src/firebase/dynamic-link-params.js';

const fieldsOf = (params: DynamicLinkParams, title?: string) => {
  const mapped = linkFieldsFromDynamicLinkParams(params, { title });
  if (!mapped.ok) throw new Error(JSON.stringify(mapped.errors));
  return mapped;
};

describe('longLinkParams', () => {
  it('reads every FDL parameter of the query, first values, blanks left out', () => {
    const query = new URLSearchParams(
      'link=https%3A%2F%2Fexample.com%2Fp%3Fx%3D1&apn=com.example.app&amv=12&ibi=com.example.ios&isi=123&efr=1&st=Hello&utm_source=mail&d=1&other=x&sd=&apn=com.other',
    );
    expect(longLinkParams(query)).toEqual({
      link: 'https://example.com/p?x=1',
      apn: 'com.example.app',
      amv: '12',
      ibi: 'com.example.ios',
      isi: '123',
      efr: '1',
      st: 'Hello',
      utm_source: 'mail',
    });
  });

  it('is null without a link', () => {
    expect(longLinkParams(new URLSearchParams('apn=com.example.app'))).toBeNull();
    expect(longLinkParams(new URLSearchParams('link=%20'))).toBeNull();
  });
});

describe('linkFieldsFromDynamicLinkParams', () => {
  it('maps every app, store, social and campaign parameter', () => {
    const { fields, warnings } = fieldsOf({
      link: 'https://example.com/welcome',
      apn: 'com.example.android',
      afl: 'https://example.com/android',
      amv: '42',
      ibi: 'com.example.ios',
      ius: 'exampleapp',
      isi: '123456789',
      imv: '2.1',
      at: 'aff',
      ct: 'camp',
      ofl: 'https://example.com/desktop',
      st: 'Welcome',
      sd: 'To the app',
      si: 'https://example.com/card.png',
      utm_source: 'newsletter',
      utm_campaign: 'spring',
    });
    expect(warnings).toEqual([]);
    expect(fields).toMatchObject({
      title: 'Welcome',
      defaultUrl: 'https://example.com/welcome',
      androidLink: {
        url: 'https://example.com/welcome',
        appPackageName: 'com.example.android',
        minimumVersion: '42',
        fallbackUrl: 'https://example.com/android',
      },
      iosLink: {
        url: 'exampleapp://google/link/?deep_link_id=https%3A%2F%2Fexample.com%2Fwelcome',
        bundleId: 'com.example.ios',
        minimumVersion: '2.1',
        fallbackUrl: 'https://apps.apple.com/app/id123456789?at=aff&ct=camp',
      },
      desktopUrl: 'https://example.com/desktop',
      socialPreview: { title: 'Welcome', description: 'To the app', imageUrl: 'https://example.com/card.png' },
      customParameters: { utm_source: 'newsletter', utm_campaign: 'spring' },
    });
  });

  it("uses the bundle id as the app's scheme without ius, and ifl before the App Store", () => {
    const { fields } = fieldsOf({ link: 'https://example.com/a', ibi: 'Com.Example.iOS', ifl: 'https://example.com/ios', isi: '1' });
    expect(fields.iosLink).toMatchObject({
      url: 'com.example.ios://google/link/?deep_link_id=https%3A%2F%2Fexample.com%2Fa',
      fallbackUrl: 'https://example.com/ios',
    });
  });

  it('maps the iPad app, its fallback and forced redirects into iosLink', () => {
    const { fields, warnings } = fieldsOf({
      link: 'https://example.com/a',
      ibi: 'com.example.ios',
      ius: 'exampleapp',
      ipbi: 'Com.Example.iPad',
      ipfl: 'https://example.com/ipad',
      efr: '1',
    });
    expect(warnings).toEqual([]);
    expect(fields.iosLink).toMatchObject({
      url: 'exampleapp://google/link/?deep_link_id=https%3A%2F%2Fexample.com%2Fa',
      ipadUrl: 'com.example.ipad://google/link/?deep_link_id=https%3A%2F%2Fexample.com%2Fa',
      ipadBundleId: 'Com.Example.iPad',
      ipadFallbackUrl: 'https://example.com/ipad',
      skipAppPage: true,
    });
    expect(fieldsOf({ link: 'https://example.com/a', ibi: 'com.example.ios', efr: '0' }).fields.iosLink).not.toHaveProperty('skipAppPage');
  });

  it('names the link by the title given, else st, else the deep link, cut to 200 characters', () => {
    const link = `https://example.com/${'a'.repeat(300)}`;
    expect(fieldsOf({ link }, 'Spring promo').fields.title).toBe('Spring promo');
    expect(fieldsOf({ link, st: 'Card' }).fields.title).toBe('Card');
    expect(fieldsOf({ link }).fields.title).toBe(link.slice(0, 200));
  });

  it('warns about parameters it cannot apply', () => {
    const { warnings } = fieldsOf({
      link: 'https://example.com/',
      afl: 'https://example.com/x',
      ifl: 'https://example.com/y',
      ipfl: 'https://example.com/z',
      efr: '1',
    });
    expect(warnings.map((w) => w.param)).toEqual(['ifl', 'ipfl', 'efr', 'afl']);
  });

  it('names the FDL parameter holding a bad value', () => {
    const cases: [DynamicLinkParams, string][] = [
      [{ link: 'javascript:alert(1)' }, 'link'],
      [{ link: 'https://example.com/', apn: 'not a package' }, 'apn'],
      [{ link: 'https://example.com/', apn: 'com.example.app', afl: 'ftp://x' }, 'afl'],
      [{ link: 'https://example.com/', apn: 'com.example.app', amv: 'v1' }, 'amv'],
      [{ link: 'https://example.com/', ibi: 'com.example.ios', imv: 'latest' }, 'imv'],
      [{ link: 'https://example.com/', ibi: 'com.example.ios', ifl: 'nope' }, 'ifl'],
      [{ link: 'https://example.com/', ibi: 'com.example.ios', ipfl: 'nope' }, 'ipfl'],
      [{ link: 'https://example.com/', ibi: 'com.example.ios', ipbi: 'not a bundle' }, 'ipbi'],
      [{ link: 'https://example.com/', ofl: 'nope' }, 'ofl'],
      [{ link: 'https://example.com/', si: 'nope' }, 'si'],
      [{ link: 'https://example.com/', st: 'x'.repeat(201) }, 'st'],
    ];
    for (const [params, param] of cases) {
      const mapped = linkFieldsFromDynamicLinkParams(params);
      expect(mapped.ok, param).toBe(false);
      if (!mapped.ok) expect(mapped.errors.map((e) => e.param)).toContain(param);
    }
  });
});
