// The public surface of @deeplink/core. Subpaths (`@deeplink/core/schemas/links`) work too.
export * from './config.js';
export * from './errors.js';
export * from './schemas/common.js';
export * from './schemas/auth.js';
export * from './schemas/links.js';
export * from './schemas/analytics.js';
export * from './db/client.js';
export * from './db/migrate.js';
export * from './db/uuid.js';
export * from './db/users-repository.js';
export * from './db/api-keys-repository.js';
export * from './db/links-repository.js';
export * from './redis/keys.js';
export * from './redis/client.js';
export * from './redis/link-cache.js';
export * from './queue/clicks.js';
export * from './ids/short-code.js';
