import fp from 'fastify-plugin';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Request count and duration by route pattern (`/api/links/:id`, never the raw URL, so ids do not
 * explode the series) and status. Requests that match no route count under `route="unmatched"`.
 */
export const requestMetrics = fp<{ registry: Registry }>(
  async (app, { registry }) => {
    const labelNames = ['method', 'route', 'status'];
    const requests = new Counter({
      name: 'api_http_requests_total',
      help: 'API requests answered, by route and status.',
      labelNames,
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'api_http_request_duration_seconds',
      help: 'Time to answer an API request, by route and status.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    app.addHook('onResponse', async (request, reply) => {
      const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
    });
  },
  { name: 'request-metrics' },
);
