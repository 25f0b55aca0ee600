import { addressLimitKey, BoundedMap } from '@deeplink/core';

/** Clients tracked at once; past this the ones seen longest ago are forgotten (and start full). */
const MAX_ADDRESSES = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per client address for lookups that end in an unknown code. Only the miss path
 * (a code in no cache) asks it, so cached redirects never touch it; an address that has spent its
 * tokens on unknown codes gets 404s for codes in no cache, without a lookup, until it refills.
 * An IPv6 client is counted by its /64 (addressLimitKey): it can pick a new address in it for
 * every request.
 */
export function createMissLimiter({ ratePerSecond, burst }: { ratePerSecond: number; burst: number }) {
  const buckets = new BoundedMap<string, Bucket>(MAX_ADDRESSES);
  const refilled = (bucket: Bucket, now: number) => {
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond);
    bucket.at = now;
    return bucket;
  };
  return {
    /** Whether a lookup beyond the caches may run for this address now. */
    allows(address: string, now: number): boolean {
      const bucket = buckets.get(addressLimitKey(address));
      return bucket === undefined || refilled(bucket, now).tokens >= 1;
    },
    /** A lookup for this address found an unknown code: one token spent. */
    spend(address: string, now: number): void {
      const key = addressLimitKey(address);
      const bucket = refilled(buckets.get(key) ?? { tokens: burst, at: now }, now);
      bucket.tokens -= 1;
      buckets.set(key, bucket);
    },
  };
}
