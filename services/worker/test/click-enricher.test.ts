import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { BoundedMap } from '@deeplink/core';
import { RollupRows } from '@deeplink/core/db';
import {
  appEventOf,
  cachedReferrerHost,
  createClickEnricher,
  createClickVisitor,
  createVisitorHash,
  referrerHost,
} from '../src/click-enricher.js';
import { countryOf, defaultGeoIpDatabase, openGeoIp, UNKNOWN_COUNTRY, type GeoIp } from '../src/geoip.js';
import { createUserAgentParser } from '../src/user-agent.js';
import { ANDROID_CHROME, DEFAULT_CLICK, IPHONE_SAFARI } from '@deeplink/test-kit/rollups';
import { BROWSER_AGENTS } from '@deeplink/test-kit/user-agents';
import { HOUR, UA, click } from './helpers.js';

const LINK = '6f1c7c3e-2b0a-4d5e-9f00-000000000001';

describe('GeoIP', () => {
  let geoip: GeoIp;
  beforeAll(async () => {
    geoip = await openGeoIp();
  });

  it('finds the country of public addresses in the default database', () => {
    expect(geoip.country('8.8.8.8')).toBe('US');
    expect(geoip.country('81.2.69.142')).toBe('GB');
    expect(geoip.country('133.242.0.1')).toBe('JP');
    expect(geoip.country('2001:4860:4860::8888')).toBe('US');
    expect(geoip.country('::ffff:194.25.0.1')).toBe('DE');
  });

  it('labels private, reserved and malformed addresses Unknown', () => {
    const unroutable = [
      '10.1.2.3',
      '192.168.1.1',
      '172.16.5.4',
      '100.64.1.1',
      '127.0.0.1',
      '203.0.113.9',
      '224.0.0.1',
      '::1',
      'fd00::1',
      'fe80::1',
    ];
    for (const ip of [...unroutable, '', 'not-an-ip']) {
      expect(geoip.country(ip)).toBe(UNKNOWN_COUNTRY);
    }
  });

  it('reads both record shapes: ip-location-db and GeoLite2/GeoIP2', () => {
    expect(countryOf({ country_code: 'fr' })).toBe('FR');
    expect(countryOf({ country: { iso_code: 'BR', geoname_id: 1, names: {} } as never })).toBe('BR');
    expect(countryOf({ registered_country: { iso_code: 'SE', geoname_id: 2, names: {} } as never })).toBe('SE');
    expect(countryOf({})).toBe(UNKNOWN_COUNTRY);
    expect(countryOf(null)).toBe(UNKNOWN_COUNTRY);
  });

  it('opens the file GEOIP_DB names instead of the default', async () => {
    const ipv4Only = createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv4.mmdb');
    expect(defaultGeoIpDatabase()).not.toBe(ipv4Only);
    const other = await openGeoIp(ipv4Only);
    expect(other.country('8.8.8.8')).toBe('US');
    // An IPv4-only file cannot place IPv6 visitors; the default database can.
    expect(other.country('2a00:1450:4001:80b::200e')).toBe(UNKNOWN_COUNTRY);
    expect(geoip.country('2a00:1450:4001:80b::200e')).toBe('IE');
  });
});

describe('User-Agent parsing', () => {
  const parse = createUserAgentParser();

  it.each([
    [UA.androidChrome, { platform: 'android', browser: 'Chrome', os: 'Android', device: 'Mobile' }],
    [UA.iphoneSafari, { platform: 'ios', browser: 'Mobile Safari', os: 'iOS', device: 'Mobile' }],
    [UA.ipadSafari, { platform: 'ios', browser: 'Mobile Safari', os: 'iOS', device: 'Mobile' }],
    [UA.windowsChrome, { platform: 'desktop', browser: 'Chrome', os: 'Windows', device: 'Desktop' }],
    [UA.linuxFirefox, { platform: 'desktop', browser: 'Firefox', os: 'Linux', device: 'Desktop' }],
    [UA.macSafari, { platform: 'desktop', browser: 'Safari', os: 'Mac OS', device: 'Desktop' }],
    ['', { platform: 'desktop', browser: 'Unknown', os: 'Unknown', device: 'Desktop' }],
  ])('labels %s', (userAgent, expected) => {
    expect(parse(userAgent)).toEqual({ bot: false, ...expected });
  });

  it.each(Object.entries(BROWSER_AGENTS))('names the browser %s', (name, userAgent) => {
    expect(parse(userAgent)).toMatchObject({ bot: false, browser: name });
  });

  it('flags bots', () => {
    expect(parse(UA.googlebot).bot).toBe(true);
    expect(parse(UA.curl).bot).toBe(true);
  });

  it('parses agents too long to cache', () => {
    expect(parse(`${UA.windowsChrome} ${'x'.repeat(2000)}`)).toMatchObject({ bot: false, browser: 'Chrome', os: 'Windows' });
    expect(parse(`${UA.googlebot} ${'x'.repeat(2000)}`).bot).toBe(true);
  });

  it('keeps its cache bounded', () => {
    const cache = new BoundedMap<string, number>(4);
    let computed = 0;
    const get = (key: string) => cache.remember(key, () => ++computed);
    for (const key of ['a', 'b', 'c', 'd', 'e']) get(key);
    expect(cache.size).toBeLessThanOrEqual(4);
    expect(get('e')).toBe(5); // recent keys are remembered
    expect(get('d')).toBe(4);
    expect(get('a')).toBe(6); // the oldest was forgotten and is computed again
    expect(computed).toBe(6);
  });
});

describe('click enrichment', () => {
  let enrich: ReturnType<typeof createClickEnricher>;
  beforeAll(async () => {
    enrich = createClickEnricher({ geoip: await openGeoIp(), parseUserAgent: createUserAgentParser(), visitorSalt: 'salt-one-0123456789' });
  });

  it('keeps the referrer host only', () => {
    expect(referrerHost('https://News.Example.com:8443/a/b?utm=1#x')).toBe('news.example.com');
    expect(referrerHost('android-app://com.google.android.gm/')).toBe('com.google.android.gm');
    expect(referrerHost('https://t.co/x')).toBe('t.co');
    // Characters a CSV export must quote are kept as they are.
    expect(referrerHost('https://x"y,z.example/')).toBe('x"y,z.example');
    expect(referrerHost('')).toBe('direct');
    expect(referrerHost('nonsense')).toBe('direct');
    expect(referrerHost('about:blank')).toBe('direct');
  });

  it('caches referrer hosts without changing them, within its bound', () => {
    const referrers = [
      'https://News.Example.com:8443/a/b?utm=1#x',
      'android-app://com.google.android.gm/',
      'nonsense',
      'about:blank',
      'https://www.google.com/',
      'http://[::1]:8080/',
      'https://xn--bcher-kva.example/',
      'https://bücher.example/',
      `https://long.example.com/${'p'.repeat(300)}`,
      'https://t.co/x',
      ' https://padded.example.com/ ',
    ];
    const cache = new BoundedMap<string, string>(4);
    const cached = cachedReferrerHost(cache);
    for (let round = 0; round < 3; round++) {
      for (const referrer of referrers) expect(cached(referrer)).toBe(referrerHost(referrer));
    }
    expect(cache.size).toBeLessThanOrEqual(8);
    for (let i = 0; i < 100; i++) expect(cached(`https://host${i}.example.com/`)).toBe(`host${i}.example.com`);
    expect(cache.size).toBeLessThanOrEqual(8);
    // Referrers too long to cache are parsed every time and never stored.
    const fresh = new BoundedMap<string, string>(4);
    expect(cachedReferrerHost(fresh)(`https://long.example.com/${'p'.repeat(300)}`)).toBe('long.example.com');
    expect(fresh.size).toBe(0);
  });

  it('computes the visitor hash as HMAC-SHA256 of address and agent, whatever the salt and input', () => {
    const salts = [
      'salt-one-0123456789',
      'x'.repeat(63),
      'y'.repeat(64),
      'z'.repeat(65),
      'a much longer salt than one SHA-256 block of sixty-four bytes, so HMAC hashes it',
      'sälz-mit-ümlauten-0123',
      '\u0000\u007f control bytes 0123456789',
    ];
    const inputs: [string, string][] = [
      ['8.8.4.4', UA.windowsChrome],
      ['2001:4860:4860::8888', UA.iphoneSafari],
      ['', ''],
      ['::ffff:81.2.69.142', 'Mozilla/5.0 (Linux; U; Android 4.4; ру-RU) 😀'],
      ['1.2.3.4', 'lone surrogate \ud800 here'],
      ['1.2.3.4', 'x'.repeat(5000)],
      ['1.2.3.4\n', UA.curl],
    ];
    for (const salt of salts) {
      const visitorHash = createVisitorHash(salt);
      for (const [ip, userAgent] of inputs) {
        const expected = createHmac('sha256', salt).update(`${ip}\n${userAgent}`).digest('base64url');
        // Twice: the hash reuses a buffer between calls.
        expect(visitorHash(ip, userAgent)).toBe(expected);
        expect(visitorHash(ip, userAgent)).toBe(expected);
      }
    }
  });

  it('hashes the visitor with the salt and keeps neither address nor agent', async () => {
    const one = enrich(click(LINK, { ip: '8.8.4.4' }))!;
    const again = enrich(click(LINK, { ip: '8.8.4.4', ts: Date.now() }))!;
    const otherAgent = enrich(click(LINK, { ip: '8.8.4.4', userAgent: UA.linuxFirefox }))!;
    const otherSalt = createClickEnricher({
      geoip: await openGeoIp(),
      parseUserAgent: createUserAgentParser(),
      visitorSalt: 'salt-two-0123456789',
    })(click(LINK, { ip: '8.8.4.4' }))!;
    expect(one.visitor).toBe(again.visitor);
    expect(one.visitor).not.toBe(otherAgent.visitor);
    expect(one.visitor).not.toBe(otherSalt.visitor);
    expect(JSON.stringify(one)).not.toContain('8.8.4.4');
    expect(JSON.stringify(one)).not.toContain('Windows NT');
  });

  it('gives a desktop Chrome, an Android phone and an iPhone the values the analytics tests record for them', () => {
    const dimensions = (userAgent: string) => enrich(click(LINK, { userAgent, ip: '8.8.8.8', referrer: '' }))!.dimensions;
    const { visitor: _visitor, ...desktopChrome } = DEFAULT_CLICK;
    expect(dimensions(BROWSER_AGENTS.Chrome)).toEqual(desktopChrome);
    expect(dimensions(UA.androidChrome)).toEqual({ ...desktopChrome, ...ANDROID_CHROME });
    expect(dimensions(UA.iphoneSafari)).toEqual({ ...desktopChrome, ...IPHONE_SAFARI });
  });

  it('puts a click in its UTC hour', () => {
    const ts = Date.UTC(2026, 5, 30, 23, 59, 59, 999);
    expect(enrich(click(LINK, { ts }))!.bucket).toBe(Date.UTC(2026, 5, 30, 23));
  });

  it('drops bots and malformed clicks', () => {
    expect(enrich(click(LINK, { userAgent: UA.googlebot }))).toBeUndefined();
    expect(enrich(click('not-a-uuid'))).toBeUndefined();
    expect(enrich(click(LINK, { ts: Number.NaN }))).toBeUndefined();
    expect(enrich({ linkId: LINK, ts: 1 } as never)).toMatchObject({ dimensions: { country: 'Unknown', referrer: 'direct' } });
  });

  it('sums clicks into one row per link and hour, per dimension value and per combination of values', () => {
    const hour = Date.UTC(2026, 0, 1, 0);
    const clicks = [
      click(LINK, { ts: hour, ip: '8.8.8.8' }),
      click(LINK, { ts: hour + 10, ip: '8.8.8.8' }),
      click(LINK, { ts: hour + 20, ip: '81.2.69.142', userAgent: UA.androidChrome }),
      click(LINK, { ts: hour + HOUR, ip: '8.8.8.8' }),
    ].map((c) => enrich(c)!);
    const { groups, values, combinations } = new RollupRows().add(clicks).toArrays();
    expect(groups.hours).toEqual([hour / HOUR, hour / HOUR + 1]);
    expect(groups.clicks).toEqual([3, 1]);
    // Hour one: the two US Windows clicks (one visitor) and the GB Android one; hour two: one click.
    expect(combinations.group).toEqual([1, 1, 2]);
    expect(combinations.clicks).toEqual([2, 1, 1]);
    expect(combinations.visitor).toHaveLength(3);
    expect(combinations.columns.country).toEqual(['US', 'GB', 'US']);
    expect(combinations.columns.platform).toEqual(['desktop', 'android', 'desktop']);
    const countries = values.dimension.flatMap((dimension, i) =>
      dimension === 'country' && values.group[i] === 1 ? [[values.value[i], values.clicks[i]]] : [],
    );
    expect(countries).toEqual([
      ['US', 2],
      ['GB', 1],
    ]);
    // Hour one: two values each for platform, country, os and device, one each for browser (Chrome)
    // and referrer; hour two: one value per dimension.
    expect(values.group).toHaveLength(4 * 2 + 2 + 6);
  });
});

describe('appEventOf', () => {
  const link = '6F1C2F44-7D7E-4C1E-9C55-0D7F4F3C8A10';
  const at = Date.UTC(2026, 2, 1, 10, 42);

  it('places an event in its UTC hour; a REDIRECT counts with its batch, any other event by its own id', () => {
    expect(appEventOf({ eventId: 'b:0', name: 'REDIRECT', platform: 'ANDROID', linkId: link, ts: at }, 'click-visitor')).toEqual({
      linkId: link.toLowerCase(),
      bucket: Date.UTC(2026, 2, 1, 10),
      name: 'REDIRECT',
      platform: 'ANDROID',
      visitor: 'click-visitor',
    });
    expect(appEventOf({ eventId: 'open-1', name: 'APP_FIRST_OPEN', platform: 'IOS', linkId: link, ts: at })).toMatchObject({
      eventId: 'open-1',
    });
  });

  it('counts an event as the visitor it carries, else its click’s, else its own id; one the sketches cannot take is hashed', () => {
    const open = { eventId: 'open-1', name: 'APP_RE_OPEN', platform: 'IOS', linkId: link, ts: at } as const;
    expect(appEventOf({ ...open, visitor: 'install-hash' }, 'click-visitor')?.visitor).toBe('install-hash');
    expect(appEventOf(open, 'click-visitor')?.visitor).toBe('click-visitor');
    expect(appEventOf(open)?.visitor).toBe('open-1');
    // A space would split it in two, a NUL cannot be stored, a long one is bounded: each becomes its own hash, the same each time.
    for (const odd of ['two words', 'a\u0000b', 'x'.repeat(201)]) {
      const visitor = appEventOf({ ...open, visitor: odd })!.visitor;
      expect(visitor).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(appEventOf({ ...open, visitor: odd })!.visitor).toBe(visitor);
    }
    expect(appEventOf({ ...open, eventId: 'an id with spaces' })!.visitor).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('gives a store REDIRECT the visitor hash its click gets', () => {
    const clickVisitor = createClickVisitor('salt-one-0123456789');
    const visitorHash = createVisitorHash('salt-one-0123456789');
    const visit = { linkId: link, ts: at, ip: '203.0.113.9', userAgent: UA.androidChrome, referrer: '' };
    expect(clickVisitor(visit)).toBe(visitorHash('203.0.113.9', UA.androidChrome));
  });

  it('drops an event the rollups cannot place: a link id that is no UUID, no time, an id PostgreSQL cannot hold', () => {
    const open = { eventId: 'open-1', name: 'APP_RE_OPEN', platform: 'IOS', linkId: link, ts: at } as const;
    expect(appEventOf({ ...open, linkId: 'not-a-uuid' })).toBeUndefined();
    expect(appEventOf({ ...open, ts: Number.NaN })).toBeUndefined();
    expect(appEventOf({ ...open, eventId: 'x'.repeat(201) })).toBeUndefined();
    expect(appEventOf({ ...open, eventId: 'a\u0000b' })).toBeUndefined();
  });
});
