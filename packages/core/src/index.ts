// The contract every workspace shares, and nothing that does I/O: configuration, the error table,
// the zod schemas of the API, routing rules and pages, the click queue's batch formats, Redis key names,
// short codes and the bounded in-process map. What talks to PostgreSQL, to Redis or runs a service
// process lives behind its own entry: `@deeplink/core/db`, `@deeplink/core/redis`,
// `@deeplink/core/runtime`, `@deeplink/core/domains`. The analytics dimensions are also their own
// entry, `@deeplink/core/dimensions`, so the dashboard bundles them without the rest.
export * from './config.js';
export { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from './default-urls.mjs';
export * from './errors.js';
export * from './schemas/common.js';
export * from './schemas/auth.js';
export * from './schemas/links.js';
export * from './analytics/dimensions.js';
export * from './analytics/filters.js';
export * from './analytics/combinations.js';
export * from './schemas/analytics.js';
export * from './schemas/live.js';
export * from './schemas/event-stream.js';
export * from './schemas/qr.js';
export * from './schemas/apps.js';
export * from './schemas/domains.js';
export * from './schemas/webhooks.js';
export * from './schemas/app-sdk.js';
export * from './schemas/firebase-rest.js';
export * from './routing/platform.js';
export * from './routing/safe-url.js';
export * from './routing/resolve-destination.js';
export * from './routing/pages.js';
export * from './routing/short-url.js';
export * from './routing/preview-crawlers.js';
export * from './routing/url-patterns.js';
export * from './apps/association.js';
export * from './apps/install-tokens.js';
export * from './apps/install-fingerprint.js';
export * from './queue/app-events.js';
export * from './queue/clicks.js';
export * from './queue/batch-formats.js';
export * from './redis/keys.js';
export * from './links/cache-id.js';
export * from './links/link-fields.js';
export * from './firebase/dynamic-link-params.js';
export * from './firebase/dynamic-link-key.js';
export * from './firebase/dynamic-link-info.js';
export * from './redis/cluster-url.js';
export * from './ids/short-code.js';
export * from './db/uuid.js';
export * from './bounded-map.js';
export * from './trust-proxy.js';
export * from './address-limit-key.js';
export * from './schemas/imports.js';
export * from './imports/import-formats.js';
export * from './imports/short-path.js';
