// Redis: the client (one node or a cluster), the link cache the API writes and the redirector
// reads, and the multi-key helpers that work on both.
export * from './client.js';
export * from './delete-keys.js';
export * from './multi-key.js';
export * from './link-cache.js';
export * from './domain-cache.js';
export * from './reconcile-link-cache.js';
export * from './reconcile-domain-cache.js';
export * from './live-clicks.js';
