// Webhooks: signing, the secrets' encryption at rest, and the queue between the API (and the
// worker's click rollups), which announce events, and the worker, which delivers them.
export * from './signature.js';
export * from './secret-box.js';
export * from './queue.js';
