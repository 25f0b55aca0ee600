import {
  AppError,
  type ErrorCode,
  type ErrorDetail,
  type ErrorEnvelope,
  type ErrorKind,
  errorKindOf,
  ERRORS,
  type GoogleError,
} from '@deeplink/core';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

const envelope = (code: ErrorCode, message: string, details: ErrorDetail[] = []): ErrorEnvelope => ({
  success: false,
  error: { code, message, details },
});

/** Google's status names, by HTTP status, for the errors of Firebase's REST paths. */
const GOOGLE_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** Firebase Dynamic Links' REST paths (firebase-rest-routes.ts): their clients parse Google's error shape. */
export const isFirebaseRestPath = (url: string): boolean => /^\/v1(?:[/?]|$)/.test(url);

/**
 * An error as Google's APIs wrote it, { error: { code, message, status, details } }: the details
 * in the message too, since FDL's clients print the message alone, and as a BadRequest's field
 * violations for those that read them.
 */
export function googleError(status: number, message: string, details: ErrorDetail[] = []): GoogleError {
  const described = details.length === 0 ? message : `${message}: ${details.map(({ field, message }) => `${field} ${message}`).join('; ')}`;
  return {
    error: {
      code: status,
      message: described,
      status: GOOGLE_STATUSES[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'),
      ...(details.length > 0 && {
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest' as const,
            fieldViolations: details.map(({ field, message }) => ({ field, description: message })),
          },
        ],
      }),
    },
  };
}

/**
 * Answers with the envelope, the status and code of `kind` (see ERRORS); on Firebase's REST paths,
 * with the same status in Google's error shape.
 */
export const sendError = (
  reply: FastifyReply,
  kind: ErrorKind,
  message: string,
  details: ErrorDetail[] = [],
  status: number = ERRORS[kind].status,
) =>
  reply
    .status(status)
    .type('application/json')
    .send(isFirebaseRestPath(reply.request.url) ? googleError(status, message, details) : envelope(ERRORS[kind].code, message, details));

const LOCATION_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path' };

/** Field paths of a failed request validation, dotted: `androidLink.appPackageName`, `page`. */
function validationDetails(error: FastifyError): ErrorDetail[] {
  return (error.validation ?? []).flatMap((issue) => {
    const field = issue.instancePath.split('/').filter(Boolean).join('.');
    const keys = (issue.params as { keys?: string[] }).keys;
    if (issue.keyword === 'unrecognized_keys' && keys) {
      const message =
        error.validationContext === 'querystring' ? 'is not a query parameter of this operation' : 'is not a recognised field';
      return keys.map((key) => ({ field: field ? `${field}.${key}` : key, message }));
    }
    // A record's bad key (a custom parameter's name): say what is wrong with it, as toErrorDetails does.
    const inner = (issue.params as { issues?: { message: string }[] }).issues;
    if (issue.keyword === 'invalid_key' && inner) {
      return inner.map(({ message }) => ({ field, message: `name ${message}` }));
    }
    return [{ field: field || LOCATION_NAMES[error.validationContext ?? 'body'] || 'body', message: issue.message ?? 'is invalid' }];
  });
}

/**
 * The one place that turns anything thrown into the spec's error envelope. Client errors keep
 * their message; server errors are logged with their cause and answered without stack or SQL.
 */
export const errorHandling = fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error instanceof AppError) {
        reply.headers(error.headers);
        return sendError(reply, error.kind, error.message, error.details);
      }
      if (hasZodFastifySchemaValidationErrors(error)) {
        const where = LOCATION_NAMES[error.validationContext ?? 'body'] ?? 'request';
        return sendError(reply, 'invalid', `The ${where} is not valid`, validationDetails(error));
      }
      const status = error.statusCode ?? 500;
      if (status === 413) {
        return sendError(reply, 'tooLarge', 'The request body is larger than the 1 MiB limit');
      }
      if (status >= 400 && status < 500) {
        // Fastify's own client errors: malformed JSON, wrong content type, empty body.
        const message =
          error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'Request bodies must be JSON (Content-Type: application/json)'
            : error instanceof SyntaxError || error.code?.startsWith('FST_ERR_CTP')
              ? `The request body is not valid JSON: ${error.message}`
              : error.message;
        // A status the table does not name (405, 431, …) keeps its number, with the code of a bad request.
        const kind = errorKindOf(status);
        return kind ? sendError(reply, kind, message) : sendError(reply, 'invalid', message, [], status);
      }
      request.log.error({ err: error }, 'request failed');
      if (isBackingServiceDown(error)) {
        return sendError(reply, 'unavailable', 'A backing service is unavailable; try again shortly');
      }
      return sendError(reply, 'internal', 'Internal server error');
    });

    app.setNotFoundHandler(sendNotFound);
  },
  { name: 'error-handling' },
);

/** Router errors, in words that do not repeat the path (it may be long, and it is the client's). */
const ROUTER_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'The path is not valid percent-encoding',
  FST_ERR_MAX_PARAM_LENGTH: 'A path segment is too long (at most 100 characters)',
};

/**
 * Router errors (a path that does not decode: 400; a path parameter past Fastify's maxParamLength: 414)
 * are answered before any hook runs, and outside setErrorHandler: Fastify's `frameworkErrors` calls
 * this, which charges the request to the rate limit as the hooks would have, then answers with the
 * envelope itself.
 */
export async function answerRouterError(
  app: FastifyInstance,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  try {
    await app.chargeRateLimit(request, reply);
  } catch (limited) {
    if (!(limited instanceof AppError)) throw limited;
    reply.headers(limited.headers);
    sendError(reply, limited.kind, limited.message, limited.details);
    return;
  }
  sendError(reply, 'invalid', ROUTER_MESSAGES[error.code] ?? 'The path is not valid', [], error.statusCode ?? 400);
}

const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers are larger than the server accepts (16 KiB)' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive' },
};

/**
 * Errors of the connection, before a request exists (headers over Node's 16 KiB maxHeaderSize,
 * malformed HTTP, a request that never finishes): the envelope, written on the socket, which is
 * then closed. They are not counted against a rate limit: no route, credentials or client address
 * (behind a proxy the socket's peer is the proxy) exist yet, and they cost neither Redis nor PostgreSQL.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, message: 'The request is not valid HTTP' };
  const body = JSON.stringify(envelope(ERRORS.invalid.code, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** The 404 envelope of a path no route serves. */
export const sendNotFound = (request: FastifyRequest, reply: FastifyReply) =>
  sendError(reply, 'notFound', `No route for ${request.method} ${request.url.split('?')[0]}`);

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'CONNECTION_DESTROYED',
]);

/** PostgreSQL or Redis unreachable: 503, so clients and load balancers know to retry. */
function isBackingServiceDown(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  const message = (error as { message?: unknown }).message;
  return (
    (typeof code === 'string' && CONNECTION_ERRORS.has(code)) ||
    (typeof message === 'string' && /Connection is closed|Stream isn't writeable|max retries per request/i.test(message))
  );
}
