// Where Redis and PostgreSQL are when REDIS_URL and DATABASE_URL are not set: the services'
// config, scripts/services.mjs, the bench and the tests all read these two, so they are plain
// JavaScript that node runs without a TypeScript loader.
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/deeplink';
