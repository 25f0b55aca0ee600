// PostgreSQL: the pool, migrations, and the repositories every service reads and writes through.
export * from './client.js';
export * from './migrate.js';
export * from './users-repository.js';
export * from './api-keys-repository.js';
export * from './links-repository.js';
export * from './dynamic-links.js';
export * from './apps-repository.js';
export * from './install-clicks-repository.js';
export * from './domains-repository.js';
export * from './analytics-repository.js';
export * from './rollups-repository.js';
export * from './rollup-partitions.js';
export * from './read-replica.js';
export * from './link-imports-repository.js';
export * from './webhooks-repository.js';
