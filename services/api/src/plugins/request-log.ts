import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/**
 * One log line per answered request, at info: its method, URL (credentials redacted by the
 * logger's serializer), address prefix, status and time in milliseconds; at error, with the error,
 * when the answer failed. Fastify's own two lines per request (received, completed) are replaced by
 * it, so a terminal or a log store holds half as many lines for the same traffic.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = { req: request, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request');
  }
}
