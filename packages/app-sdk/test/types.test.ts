import type { AppOpenBody, AppOpenResult as ApiAppOpenResult } from '@deeplink/core';
import { describe, expectTypeOf, it } from 'vitest';
import type { AppOpenResult, OpenOptions } from '../src/index.js';

// The SDK writes its types out by hand (it has no runtime dependency); these fail `npm run
// typecheck` when the API's schema and the SDK drift apart.
describe('the SDK types', () => {
  it('are the API schema types', () => {
    expectTypeOf<AppOpenResult>().toEqualTypeOf<ApiAppOpenResult>();
    expectTypeOf<Omit<AppOpenBody, 'url'>>().toEqualTypeOf<Omit<OpenOptions, 'signal'>>();
  });
});
