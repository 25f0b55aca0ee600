import fp from 'fastify-plugin';

/**
 * One log line per answered request, at info: its method, URL (credentials redacted by the
 * logger's serializer), address prefix, status and time in milliseconds. Fastify's own two lines
 * per request (received, completed) are turned off (`disableRequestLogging`), so a terminal or a
 * log store holds half as many lines for the same traffic.
 */
export const requestLog = fp(
  async (app) => {
    app.addHook('onResponse', async (request, reply) => {
      request.log.info({ req: request, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
    });
  },
  { name: 'request-log' },
);
