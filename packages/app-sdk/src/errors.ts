import type { ErrorDetail } from './types.js';

/** Why no answer came back from the API (or none that is the API's). */
export type NetworkErrorCode = 'CONNECTION_FAILED' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE';

interface AppSdkErrorInit {
  status?: number;
  code: string;
  details?: ErrorDetail[];
  cause?: unknown;
}

/** Base of every error the SDK throws: `instanceof AppSdkError` catches them all. */
export class AppSdkError extends Error {
  override name = 'AppSdkError';
  /** HTTP status, when the API answered. */
  readonly status: number | undefined;
  /** The API's error code (`NOT_FOUND`, `RATE_LIMITED`, …) or a NetworkErrorCode. */
  readonly code: string;
  /** Per-field problems, for a 400. */
  readonly details: ErrorDetail[];

  constructor(message: string, init: AppSdkErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
  }
}

/**
 * 401: the app key is missing, unknown, or was rotated (a rotated key stops at once). Retrying
 * does not help; the app needs an update that carries the current key.
 */
export class InvalidAppKeyError extends AppSdkError {
  override name = 'InvalidAppKeyError';
}

/**
 * 404: no link of this app's account at that URL: unknown, deleted, expired, or on a domain that
 * is not the account's. Open the URL in a browser to show the visitor what the web shows.
 */
export class LinkNotFoundError extends AppSdkError {
  override name = 'LinkNotFoundError';
}

/** 400: the request was refused as invalid (a URL that is not http(s), a malformed openId); `details` names the fields. */
export class InvalidRequestError extends AppSdkError {
  override name = 'InvalidRequestError';
}

/** 429: too many opens from this address or with this key, after the retries the client allows. */
export class RateLimitedError extends AppSdkError {
  override name = 'RateLimitedError';
  /** Seconds the API asked to wait (Retry-After), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, init: AppSdkErrorInit & { retryAfterSeconds: number | undefined }) {
    super(message, init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** No usable answer: no connection (offline, DNS, refused), a timeout, an abort, or a reply that is not the API's JSON. */
export class NetworkError extends AppSdkError {
  override name = 'NetworkError';
  declare readonly code: NetworkErrorCode;

  constructor(message: string, init: Omit<AppSdkErrorInit, 'code'> & { code: NetworkErrorCode }) {
    super(message, init);
  }
}

/** The error class for an API error envelope, chosen by HTTP status. */
export function errorForStatus(
  status: number,
  message: string,
  init: AppSdkErrorInit & { retryAfterSeconds: number | undefined },
): AppSdkError {
  if (status === 401) return new InvalidAppKeyError(message, init);
  if (status === 404) return new LinkNotFoundError(message, init);
  if (status === 400) return new InvalidRequestError(message, init);
  if (status === 429) return new RateLimitedError(message, init);
  return new AppSdkError(message, init);
}
