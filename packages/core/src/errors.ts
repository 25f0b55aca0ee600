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

/** The one error the services throw on purpose; the API's error handler turns it into the envelope. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const invalidRequest = (message: string, details: ErrorDetail[] = [], status = 400) =>
  new AppError(status, ErrorCode.INVALID_REQUEST, message, details);
export const unauthorized = (message = 'Authentication required') => new AppError(401, ErrorCode.UNAUTHORIZED, message);
export const forbidden = (message = 'You do not have access to this resource') =>
  new AppError(403, ErrorCode.FORBIDDEN, message);
export const notFound = (message = 'Resource not found') => new AppError(404, ErrorCode.NOT_FOUND, message);
