// The public surface of @deeplink/app-sdk.
export { createDeepLinkClient, type DeepLinkClient, type DeepLinkClientOptions, type OpenOptions } from './client.js';
export {
  AppSdkError,
  InvalidAppKeyError,
  InvalidRequestError,
  LinkNotFoundError,
  NetworkError,
  RateLimitedError,
  type NetworkErrorCode,
} from './errors.js';
export type { DeviceFacts, DeviceFactsReader, InstallReferrerReader, PasteboardReader, PlatformReaders } from './platform.js';
export type { AppOpenResult, ErrorDetail } from './types.js';
