import { describe, expect, it } from 'vitest';
import { addressLimitKey } from '../src/address-limit-key.js';

describe('addressLimitKey', () => {
  it('keeps IPv4 addresses as they are', () => {
    expect(addressLimitKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressLimitKey('')).toBe('');
  });

  it('counts every address of an IPv6 /64 as one, however it is spelled', () => {
    for (const address of [
      '2001:db8:1:2:3:4:5:6',
      '2001:DB8:0001:0002::9',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:db8:1:2::',
      '2001:db8:1:2:0:0:1.2.3.4',
      '2001:db8:1:2::7%eth0',
    ]) {
      expect(addressLimitKey(address), address).toBe('2001:db8:1:2::');
    }
    expect(addressLimitKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::');
    expect(addressLimitKey('::1')).toBe('::');
    expect(addressLimitKey('2001:0:0:1::5')).toBe('2001:0:0:1::');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(addressLimitKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressLimitKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });
});
