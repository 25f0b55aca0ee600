import type { ErrorDetail } from './types.js';

/** Codes of failures that never got an answer from the API (or got one that is not the API's). */
export type NetworkErrorCode = 'CONNECTION_FAILED' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE';

interface ServiceErrorInit {
  status?: number;
  code: string;
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
  readonly code: string;
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

/** 401 or 403: missing, invalid or revoked credentials, or no access to the resource. */
export class ServiceAuthError extends ServiceError {
  override name = 'ServiceAuthError';
}

/** 400, 409 or 413: the request was refused as invalid; `details` names each bad field. */
export class ServiceValidationError extends ServiceError {
  override name = 'ServiceValidationError';
}

/** No usable answer: connection refused, DNS failure, timeout, abort, or a reply that is not the API's JSON. */
export class ServiceNetworkError extends ServiceError {
  override name = 'ServiceNetworkError';
  declare readonly code: NetworkErrorCode;
}

/** The error class for an API error envelope, chosen by HTTP status. */
export function errorForStatus(status: number, message: string, init: ServiceErrorInit): ServiceError {
  if (status === 401 || status === 403) return new ServiceAuthError(message, init);
  if (status === 400 || status === 409 || status === 413) return new ServiceValidationError(message, init);
  return new ServiceError(message, init);
}
