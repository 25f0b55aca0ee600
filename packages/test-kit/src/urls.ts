/** Set by the global setup: the migrated database each test file clones. */
export const templateDatabase = (): string => process.env.DEEPLINK_TEST_TEMPLATE ?? 'deeplink_test_template';

import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '../../../scripts/services.mjs';

/** The server tests run against: DATABASE_URL's server (default: local PostgreSQL, as scripts/services.mjs defines it). */
export const baseDatabaseUrl = (): string => process.env.DATABASE_URL || DEFAULT_DATABASE_URL;

export function databaseUrl(name: string): string {
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export const adminUrl = (): string => databaseUrl('postgres');

export const redisUrl = (): string => process.env.REDIS_URL || DEFAULT_REDIS_URL;
