// The public surface of @deeplink/client.
export { createClient, type ClientOptions, type DeeplinkClient } from './client.js';
export {
  ConflictError,
  NotFoundError,
  RateLimitError,
  ServiceAuthError,
  ServiceError,
  ServiceForbiddenError,
  ServiceNetworkError,
  ServiceValidationError,
  type ApiErrorCode,
  type NetworkErrorCode,
} from './errors.js';
export type { RequestOptions } from './http.js';
export type * from './types.js';
