/** The error codes of SPEC §7, plus RATE_LIMITED for 429 (the spec leaves its code open). */
export const ErrorCode = {
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  INVALID_REQUEST: 'INVALID_REQUEST',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * Why a request failed, and the one place each reason gets its HTTP status and SPEC code. The
 * SPEC gives one code to several statuses (a taken slug is a 409 INVALID_REQUEST), so call sites
 * name the reason and never pair a status with a code by hand.
 */
export const ERRORS = {
  invalid: { status: 400, code: ErrorCode.INVALID_REQUEST },
  unauthorized: { status: 401, code: ErrorCode.UNAUTHORIZED },
  forbidden: { status: 403, code: ErrorCode.FORBIDDEN },
  notFound: { status: 404, code: ErrorCode.NOT_FOUND },
  conflict: { status: 409, code: ErrorCode.INVALID_REQUEST },
  tooLarge: { status: 413, code: ErrorCode.INVALID_REQUEST },
  unsupportedMediaType: { status: 415, code: ErrorCode.INVALID_REQUEST },
  rateLimited: { status: 429, code: ErrorCode.RATE_LIMITED },
  internal: { status: 500, code: ErrorCode.INTERNAL_ERROR },
  unavailable: { status: 503, code: ErrorCode.INTERNAL_ERROR },
} as const satisfies Record<string, { status: number; code: ErrorCode }>;
export type ErrorKind = keyof typeof ERRORS;

/** The reason a status stands for, if the table has one: for errors that arrive with a status only (Fastify's own). */
export function errorKindOf(status: number): ErrorKind | undefined {
  return (Object.keys(ERRORS) as ErrorKind[]).find((name) => ERRORS[name].status === status);
}

/** The one error the services throw on purpose; the API's error handler turns it into the envelope. */
export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  readonly code: ErrorCode;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    ({ status: this.status, code: this.code } = ERRORS[kind]);
  }
}

export const invalidRequest = (message: string, details: ErrorDetail[] = []) => new AppError('invalid', message, details);
export const conflict = (message: string, details: ErrorDetail[] = []) => new AppError('conflict', message, details);
export const unauthorized = (message = 'Authentication required') => new AppError('unauthorized', message);
export const forbidden = (message = 'You do not have access to this resource', details: ErrorDetail[] = []) =>
  new AppError('forbidden', message, details);
export const notFound = (message = 'Resource not found') => new AppError('notFound', message);
/** 429 with Retry-After (whole seconds, at least 1). */
export const rateLimited = (message: string, retryAfterSeconds: number) =>
  new AppError('rateLimited', message, [], { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
