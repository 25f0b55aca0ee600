import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressText } from '../src/client-address.js';

const bytes = (...values: number[]) => Uint8Array.from(values);
/** WHATWG URL serialises IPv6 hosts in the RFC 5952 form: the oracle. */
const canonical = (address: Uint8Array) => {
  const full = Array.from({ length: 8 }, (_, i) => ((address[2 * i]! << 8) | address[2 * i + 1]!).toString(16)).join(':');
  return new URL(`http://[${full}]/`).hostname.slice(1, -1);
};

describe('addressText', () => {
  it('writes IPv4 sockets and IPv4-mapped IPv6 peers as dotted IPv4', () => {
    expect(addressText(bytes(127, 0, 0, 1))).toBe('127.0.0.1');
    expect(addressText(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 203, 0, 113, 7))).toBe('203.0.113.7');
    expect(addressText(bytes(255, 255, 255, 255))).toBe('255.255.255.255');
  });

  it('returns the same string object for the same IPv4 address', () => {
    expect(addressText(bytes(10, 1, 2, 3))).toBe(addressText(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 1, 2, 3)));
  });

  it('writes IPv6 in RFC 5952 form', () => {
    expect(addressText(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))).toBe('::1');
    expect(addressText(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))).toBe('2001:db8::1');
    expect(addressText(new Uint8Array(16))).toBe('::');
    // A single zero group stays; of two equal runs the first is shortened.
    expect(addressText(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1))).toBe('2001:db8:0:1:1:1:1:1');
    expect(addressText(bytes(0x20, 0x01, 0, 0, 0, 0, 0xab, 0xcd, 0, 0, 0, 0, 0, 0x12, 0, 0))).toBe('2001::abcd:0:0:12:0');
  });

  it('agrees with the WHATWG serialiser on random addresses with zero runs', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 2_000; n++) {
      const address = Uint8Array.from({ length: 16 }, () => (random() < 0.5 ? 0 : Math.floor(random() * 256)));
      address[0] = 0x20; // not IPv4-mapped
      const text = addressText(address);
      expect(text).toBe(canonical(address));
      expect(isIP(text)).toBe(6);
    }
  });

  it('has no text for an address of another length', () => {
    expect(addressText(new Uint8Array(0))).toBe('');
    expect(addressText(new Uint8Array(6))).toBe('');
  });
});
