import type { ErrorDetail } from './types.js';

/** Codes of failures that never got an answer from the API (or got one that is not the API's). */
export type NetworkErrorCode = 'CONNECTION_FAILED' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE';

/** The error codes the API answers with (its envelope's `error.code`). */
export type ApiErrorCode = 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'INVALID_REQUEST' | 'RATE_LIMITED' | 'INTERNAL_ERROR';

interface ServiceErrorInit {
  status?: number;
  code: ApiErrorCode | NetworkErrorCode;
  details?: ErrorDetail[];
  retryAfter?: number;
  cause?: unknown;
}

/** Base of every error the client throws: `instanceof ServiceError` catches them all. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  /** HTTP status, when there was a response. */
  readonly status: number | undefined;
  /** The API's error code (`NOT_FOUND`, `RATE_LIMITED`, …) or a NetworkErrorCode. */
  readonly code: ApiErrorCode | NetworkErrorCode;
  /** Per-field problems, for validation failures. */
  readonly details: ErrorDetail[];
  /** Seconds the API asked to wait before retrying (429 Retry-After). */
  readonly retryAfter: number | undefined;

  constructor(message: string, init: ServiceErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter;
  }
}

/** 401: missing, invalid, expired or revoked credentials. Sign in again or use another key. */
export class ServiceAuthError extends ServiceError {
  override name = 'ServiceAuthError';
}

/**
 * 403: the credentials are good but may not do this (another account's link, an API key managing
 * keys). A ServiceAuthError too, so code that caught both statuses as one keeps working.
 */
export class ServiceForbiddenError extends ServiceAuthError {
  override name = 'ServiceForbiddenError';
}

/** 400, 409 or 413: the request was refused as invalid; `details` names each bad field. */
export class ServiceValidationError extends ServiceError {
  override name = 'ServiceValidationError';
}

/** 409: the email is already registered, or the custom slug is taken. A ServiceValidationError too. */
export class ConflictError extends ServiceValidationError {
  override name = 'ConflictError';
}

/** 404: no such link, key or route (another account's resources are 403, a ServiceForbiddenError). */
export class NotFoundError extends ServiceError {
  override name = 'NotFoundError';
}

/** 429: over the rate limit; `retryAfter` says in how many seconds to come back. */
export class RateLimitError extends ServiceError {
  override name = 'RateLimitError';
  declare readonly retryAfter: number | undefined;
}

/** No usable answer: connection refused, DNS failure, timeout, abort, or a reply that is not the API's JSON. */
export class ServiceNetworkError extends ServiceError {
  override name = 'ServiceNetworkError';
  declare readonly code: NetworkErrorCode;
}

/** The error class for an API error envelope, chosen by HTTP status. */
export function errorForStatus(status: number, message: string, init: ServiceErrorInit): ServiceError {
  if (status === 401) return new ServiceAuthError(message, init);
  if (status === 403) return new ServiceForbiddenError(message, init);
  if (status === 409) return new ConflictError(message, init);
  if (status === 400 || status === 413) return new ServiceValidationError(message, init);
  if (status === 404) return new NotFoundError(message, init);
  if (status === 429) return new RateLimitError(message, init);
  return new ServiceError(message, init);
}
