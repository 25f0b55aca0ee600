// What every service process shares: logging, configuration at start-up, Redis connections and
// their outage log, timeouts, readiness, metrics and the operators' listener, graceful shutdown.
export * from './logger.js';
export * from './timeout.js';
export * from './readiness.js';
export * from './shutdown.js';
export * from './redis-connections.js';
export * from './service-config.js';
export * from './metrics.js';
export * from './ops-server.js';
export * from './retry.js';
export * from './queue-durability.js';
