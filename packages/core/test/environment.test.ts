import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';

describe('test environment', () => {
  let env: TestEnvironment;
  beforeAll(async () => {
    env = await createTestEnvironment();
  });
  afterAll(() => env.close());

  it('has a migrated database with the hll extension and a reachable Redis', async () => {
    const [row] = await env.sql<
      { n: number }[]
    >`SELECT hll_cardinality(hll_add_agg(hll_hash_text(v)))::int AS n FROM unnest(ARRAY['a','b','a']) v`;
    expect(row?.n).toBe(2);
    expect(await env.redis.ping()).toBe('PONG');
  });
});
