import { describe, expect, it } from 'vitest';
import { createHostnames } from '../src/hostnames.js';

describe('createHostnames', () => {
  const hostnames = createHostnames('https://go.example.com');

  it("takes SHORT_URL_BASE's host, IP addresses, localhost and no Host for the default domain", () => {
    for (const host of [
      'go.example.com',
      'GO.Example.com:8443',
      'go.example.com.',
      '',
      '127.0.0.1:8080',
      '10.1.2.3',
      '[::1]:8080',
      '[2001:db8::1]',
      'localhost:3000',
    ]) {
      expect(hostnames.custom(host), host).toBe('');
    }
  });

  it('names any other host, lower-cased, without port or trailing dot', () => {
    expect(hostnames.custom('links.acme.com')).toBe('links.acme.com');
    expect(hostnames.custom('Links.ACME.com:443')).toBe('links.acme.com');
    expect(hostnames.custom('links.acme.com.')).toBe('links.acme.com');
    // Remembered: the same answer again, from the memo.
    expect(hostnames.custom('Links.ACME.com:443')).toBe('links.acme.com');
  });

  it('refuses, before any lookup, a Host no domain can have', () => {
    const refused = [
      `${`${'a'.repeat(60)}.`.repeat(5)}example.com`, // over 253 characters in labels of 61
      `${'a'.repeat(64)}.example.com`, // a label over 63
      'x'.repeat(60_000),
      'bad_host.example.com',
      'bad host.example.com',
      'café.example.com',
      '-x.example.com',
      'a..example.com',
      'intranet', // a single label
      'go.example.com:https',
      'go.example.com:123456',
      '[::1',
      '[not-an-address]',
      '[::1]x',
      '::1',
    ];
    for (const host of refused) expect(hostnames.custom(host), host).toBeNull();
    // The longest hostname DNS allows, with its trailing dot and a port, is still one.
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(longest).toHaveLength(253);
    expect(hostnames.custom(`${longest}.:65535`)).toBe(longest);
  });

  it('keeps answering past its memo size', () => {
    for (let i = 0; i < 2_500; i++) expect(hostnames.custom(`h${i}.example.net`)).toBe(`h${i}.example.net`);
    expect(hostnames.custom('go.example.com')).toBe('');
  });
});
