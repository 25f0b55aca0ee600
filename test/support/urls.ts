/** Set by the global setup: the migrated database each test file clones. */
export const templateDatabase = (): string => process.env.DEEPLINK_TEST_TEMPLATE ?? 'deeplink_test_template';

/** The server tests run against: DATABASE_URL's server (default: local PostgreSQL). */
export const baseDatabaseUrl = (): string =>
  process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/deeplink';

export function databaseUrl(name: string): string {
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export const adminUrl = (): string => databaseUrl('postgres');

export const redisUrl = (): string => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
