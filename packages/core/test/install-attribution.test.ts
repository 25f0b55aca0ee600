import { describe, expect, it } from 'vitest';
import { UA } from '@deeplink/test-kit/user-agents';
import {
  addressPrefix,
  findInstallToken,
  hashInstallToken,
  INSTALL_TOKEN_LENGTH,
  networkOf,
  newInstallToken,
  primaryLanguage,
  userAgentFacts,
} from '../src/index.js';

describe('install tokens', () => {
  it('are 22 URL-safe characters, each different, hashed to 32 bytes', () => {
    const tokens = new Set(Array.from({ length: 1000 }, newInstallToken));
    expect(tokens.size).toBe(1000);
    for (const token of tokens) expect(token).toMatch(new RegExp(`^[A-Za-z0-9_-]{${INSTALL_TOKEN_LENGTH}}$`));
    const [token] = tokens;
    expect(hashInstallToken(token!)).toHaveLength(32);
    expect(hashInstallToken(token!).equals(hashInstallToken(`${token}`))).toBe(true);
  });

  it('are found in a Play referrer as the app receives it, raw or encoded, and in a pasteboard URL', () => {
    const token = newInstallToken();
    expect(findInstallToken(`utm_source=newsletter&utm_campaign=spring&dl_token=${token}`)).toBe(token);
    expect(findInstallToken(`dl_token=${token}&utm_source=newsletter`)).toBe(token);
    expect(findInstallToken(`utm_source%3Dnewsletter%26dl_token%3D${token}`)).toBe(token);
    expect(findInstallToken(`utm_source%253Dx%2526dl_token%253D${token}`)).toBe(token);
    expect(findInstallToken(`https://go.acme.com/spring?dl_token=${token}`)).toBe(token);
  });

  it('are not found in text that only looks like one', () => {
    const token = newInstallToken();
    expect(findInstallToken('utm_source=newsletter')).toBeUndefined();
    expect(findInstallToken(`xdl_token=${token}`)).toBeUndefined();
    expect(findInstallToken(`dl_token=${token}A`)).toBeUndefined();
    expect(findInstallToken(`dl_token=${token.slice(1)}`)).toBeUndefined();
    expect(findInstallToken('')).toBeUndefined();
  });
});

describe('install fingerprint facts', () => {
  it('keeps the /24 or /64 prefix of an address, never the address', () => {
    expect(addressPrefix('203.0.113.77')).toBe('203.0.113.0/24');
    expect(addressPrefix('::ffff:203.0.113.77')).toBe('203.0.113.0/24');
    expect(addressPrefix('2001:db8:85a3:8d3:1319:8a2e:370:7348')).toBe('2001:db8:85a3:8d3::/64');
    expect(addressPrefix('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressPrefix('not an address')).toBeUndefined();
  });

  it('hashes the network with a secret: the same network matches, another or another secret does not', () => {
    const secret = 'a-secret-of-sixteen-chars';
    expect(networkOf('203.0.113.7', secret)).toBe(networkOf('203.0.113.250', secret));
    expect(networkOf('203.0.113.7', secret)).not.toBe(networkOf('203.0.114.7', secret));
    expect(networkOf('203.0.113.7', secret)).not.toBe(networkOf('203.0.113.7', `${secret}!`));
    expect(networkOf('203.0.113.7', secret)).not.toContain('203');
    expect(networkOf('nonsense', secret)).toBeUndefined();
  });

  it('reads the OS, its version and the device family from a browser agent', () => {
    expect(userAgentFacts(UA.iphoneSafari)).toMatchObject({
      os: 'ios',
      deviceFamily: 'phone',
      osVersion: expect.stringMatching(/^\d+\.\d+$/),
    });
    expect(userAgentFacts(UA.androidChrome)).toMatchObject({ os: 'android', deviceFamily: 'phone' });
    expect(userAgentFacts('Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 Chrome/120.0 Safari/537.36')).toEqual({
      os: 'android',
      osVersion: '14',
      deviceFamily: 'tablet',
    });
    expect(userAgentFacts('Mozilla/5.0 (iPad; CPU OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15')).toEqual({
      os: 'ios',
      osVersion: '17.4',
      deviceFamily: 'tablet',
    });
    expect(userAgentFacts('curl/8.5')).toEqual({});
  });

  it("reads iOS 26's version from Safari's Version/ token, and leaves out the Android version Chrome's reduced agent freezes", () => {
    const safari26 =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1';
    expect(userAgentFacts(safari26)).toEqual({ os: 'ios', osVersion: '26.1', deviceFamily: 'phone' });
    // A real iOS 18.6 Safari says Version/18.6: its OS token stands.
    expect(userAgentFacts(safari26.replace('Version/26.1', 'Version/18.6'))).toMatchObject({ osVersion: '18.6' });
    // Other iOS browsers have no Version/ token: the OS token is all there is.
    expect(userAgentFacts(UA.iphoneChrome)).toMatchObject({ osVersion: '17.5' });
    expect(userAgentFacts(UA.androidReduced)).toEqual({ os: 'android', deviceFamily: 'phone' });
  });

  it('takes the primary language of a header or a locale', () => {
    expect(primaryLanguage('fr-CA,fr;q=0.9,en;q=0.8')).toBe('fr');
    expect(primaryLanguage('en_US')).toBe('en');
    expect(primaryLanguage('DE')).toBe('de');
    expect(primaryLanguage('*')).toBeUndefined();
    expect(primaryLanguage(undefined)).toBeUndefined();
  });
});
