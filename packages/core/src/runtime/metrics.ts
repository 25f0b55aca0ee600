import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * A Prometheus registry for one service: Node's process, GC and event-loop metrics (prom-client's
 * defaults) plus whatever the service registers, every series labelled with `service`.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export type { Registry };
