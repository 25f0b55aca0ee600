// The wire types are generated from the shared zod schemas (generated-types.test.ts keeps them
// current); these checks cover what generation alone does not: that the emitter renders what zod
// infers for each construct it meets, and that the client's wrappers differ from the wire exactly
// where they mean to. They run in the typecheck (`tsc -p packages/client/tsconfig.json`).
import type * as Core from '@deeplink/core';
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as Client from '../src/types.js';

/** The client accepts a Date where the API takes an ISO string, and sends its ISO string. */
type WithDates<T, K extends keyof T> = Flat<Omit<T, K> & { [P in keyof Pick<T, K>]: Pick<T, K>[P] | Date }>;
type Flat<T> = { [K in keyof T]: T[K] };

describe('client types match the shared schemas', () => {
  it('the emitter renders what zod infers', () => {
    // $ref to named types, records, optional fields.
    expectTypeOf<Client.Link>().toEqualTypeOf<Core.Link>();
    // nullable
    expectTypeOf<Client.ApiKeyListItem>().toEqualTypeOf<Core.ApiKeyListItem>();
    // nested objects and arrays of objects, enums inline
    expectTypeOf<Client.LinkAnalytics>().toEqualTypeOf<Core.LinkAnalytics>();
    expectTypeOf<Client.LinkPage>().toEqualTypeOf<z.infer<typeof Core.linkListResponseSchema>['data']>();
    // consts, a discriminated union, the input side of defaults and transforms
    expectTypeOf<Client.Domain>().toEqualTypeOf<Core.Domain>();
    expectTypeOf<Client.CreateAppInput>().toEqualTypeOf<Core.CreateAppBody>();
    expectTypeOf<Client.UpdateDomainInput>().toEqualTypeOf<z.input<typeof Core.updateDomainBodySchema>>();
    expectTypeOf<Client.UpdateAppInput>().toEqualTypeOf<z.input<typeof Core.updateAppBodySchema>>();
    expectTypeOf<Client.ErrorCode>().toEqualTypeOf<Core.ErrorEnvelope['error']['code']>();
  });

  it('wrappers differ from the wire only where the client means to', () => {
    expectTypeOf<Client.CreateLinkInput>().toEqualTypeOf<WithDates<Core.CreateLinkBody, 'expirationDate'>>();
    expectTypeOf<Client.UpdateLinkInput>().toEqualTypeOf<WithDates<Core.UpdateLinkBody, 'expirationDate'>>();
    // The API coerces page and limit from the query string (its input type is unknown) and reads
    // include from text; the client sends numbers and names the extras.
    expectTypeOf<Client.ListLinksQuery>().toEqualTypeOf<
      Flat<
        Omit<z.input<typeof Core.listLinksQuerySchema>, 'page' | 'limit' | 'include'> & {
          page?: number;
          limit?: number;
          include?: Core.LinkListExtra | Core.LinkListExtra[];
        }
      >
    >();
    expectTypeOf<Client.LinkAnalyticsQuery>().toEqualTypeOf<
      WithDates<z.input<typeof Core.linkAnalyticsQuerySchema>, 'startDate' | 'endDate'>
    >();
    expectTypeOf<Client.QrQuery>().toEqualTypeOf<
      Flat<Omit<z.input<typeof Core.linkQrQuerySchema>, 'size' | 'margin'> & { size?: number; margin?: number }>
    >();
    expectTypeOf<Client.AnalyticsExportQuery>().toEqualTypeOf<
      WithDates<z.input<typeof Core.analyticsExportQuerySchema>, 'startDate' | 'endDate'>
    >();
    expectTypeOf<Client.AccountExportQuery>().toEqualTypeOf<
      WithDates<z.input<typeof Core.accountExportQuerySchema>, 'startDate' | 'endDate'>
    >();
    expectTypeOf<Client.SummaryAnalyticsQuery>().toEqualTypeOf<
      WithDates<z.input<typeof Core.summaryAnalyticsQuerySchema>, 'startDate' | 'endDate'>
    >();
  });
});
