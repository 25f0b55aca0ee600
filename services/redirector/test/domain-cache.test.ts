import { describe, expect, it } from 'vitest';
import { createDomainCache, domainAnswers, type DomainEntry, domainEntryBytes } from '../src/domain-lookup.js';

const unknownHost: DomainEntry = { answers: null, freshUntil: Infinity };

describe('the domain cache', () => {
  it('weighs an entry by its hostname and its prepared answers', () => {
    const apps = [{ platform: 'ios' as const, teamId: 'ABCDE12345', bundleId: 'com.acme.shop' }];
    const known: DomainEntry = { answers: domainAnswers(apps, 'https://example.com/not-found'), freshUntil: Infinity };
    expect(domainEntryBytes(unknownHost, 'a'.repeat(253))).toBeGreaterThanOrEqual(2 * 253);
    expect(domainEntryBytes(known, 'go.acme.com')).toBeGreaterThan(
      domainEntryBytes(unknownHost, 'go.acme.com') + 'https://example.com/not-found'.length,
    );
  });

  it('holds no more than its byte bound, however many hosts arrive', () => {
    const maxBytes = 100_000;
    const cache = createDomainCache(maxBytes);
    const entryBytes = domainEntryBytes(unknownHost, `${'h'.repeat(240)}9999.example`);
    for (let i = 0; i < 5_000; i++) {
      cache.set(`${'h'.repeat(240)}${i}.example`, unknownHost);
      // The bound, give or take the entry that crossed it (see BoundedMap).
      expect(cache.weight).toBeLessThanOrEqual(maxBytes + entryBytes);
    }
    // Far fewer than the 10,000 entries the count alone would allow, and the newest kept.
    expect(cache.size).toBeLessThan(200);
    expect(cache.get(`${'h'.repeat(240)}4999.example`)).toBe(unknownHost);
  });
});
