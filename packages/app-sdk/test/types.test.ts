import type {
  AppInstallBody,
  AppInstallResult as ApiAppInstallResult,
  AppOpenBody,
  AppOpenResult as ApiAppOpenResult,
} from '@deeplink/core';
import { describe, expectTypeOf, it } from 'vitest';
import type { AppInstallResult, AppOpenResult, InstallOptions, OpenOptions } from '../src/index.js';

// The SDK writes its types out by hand (it has no runtime dependency); these fail `npm run
// typecheck` when the API's schema and the SDK drift apart.
describe('the SDK types', () => {
  it('are the API schema types', () => {
    expectTypeOf<AppOpenResult>().toEqualTypeOf<ApiAppOpenResult>();
    expectTypeOf<Omit<AppOpenBody, 'url'>>().toEqualTypeOf<Omit<OpenOptions, 'signal'>>();
    expectTypeOf<AppInstallResult>().toEqualTypeOf<ApiAppInstallResult>();
    // installId is optional in the SDK only: it makes one up when the app passes none.
    expectTypeOf<Omit<AppInstallBody, 'installId'>>().toEqualTypeOf<Omit<InstallOptions, 'signal' | 'installId'>>();
  });
});
