// The public surface of @deeplink/app-sdk.
export {
  createDeepLinkClient,
  type DeepLinkClient,
  type DeepLinkClientOptions,
  type InstallOptions,
  type OpenOptions,
} from './client.js';
export { newInstallId } from './open-id.js';
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
export type { AppInstallMatch, AppInstallResult, AppOpenResult, ErrorDetail, InstallDevice } from './types.js';
