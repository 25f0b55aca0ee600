// The client writes its wire types out (so its declarations need neither @deeplink/core nor zod);
// these checks tie each one to the shared zod schema. They run in the typecheck
// (`tsc -p packages/client/tsconfig.json`): a drift fails it.
import type * as Core from '@deeplink/core';
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as Client from '../src/types.js';

/** The client accepts a Date where the API takes an ISO string, and sends its ISO string. */
type WithDates<T, K extends keyof T> = Flat<Omit<T, K> & { [P in keyof Pick<T, K>]: Pick<T, K>[P] | Date }>;
type Flat<T> = { [K in keyof T]: T[K] };

describe('client types match the shared schemas', () => {
  it('responses', () => {
    expectTypeOf<Client.User>().toEqualTypeOf<Core.User>();
    expectTypeOf<Client.AuthResult>().toEqualTypeOf<Core.AuthResult>();
    expectTypeOf<Client.ApiKey>().toEqualTypeOf<Core.ApiKey>();
    expectTypeOf<Client.ApiKeyListItem>().toEqualTypeOf<Core.ApiKeyListItem>();
    expectTypeOf<Client.LinkListItem>().toEqualTypeOf<Core.LinkListItem>();
    expectTypeOf<Client.TagCount>().toEqualTypeOf<z.infer<typeof Core.tagListResponseSchema>['data']['tags'][number]>();
    expectTypeOf<Client.AndroidLink>().toEqualTypeOf<Core.AndroidLink>();
    expectTypeOf<Client.IosLink>().toEqualTypeOf<Core.IosLink>();
    expectTypeOf<Client.Link>().toEqualTypeOf<Core.Link>();
    expectTypeOf<Client.LinkSummary>().toEqualTypeOf<Core.LinkSummary>();
    expectTypeOf<Client.Pagination>().toEqualTypeOf<Core.Pagination>();
    expectTypeOf<Client.LinkPage>().toEqualTypeOf<z.infer<typeof Core.linkListResponseSchema>['data']>();
    expectTypeOf<Client.LinkAnalytics>().toEqualTypeOf<Core.LinkAnalytics>();
    expectTypeOf<Client.SummaryAnalytics>().toEqualTypeOf<Core.SummaryAnalytics>();
    expectTypeOf<Client.AnalyticsExportRow>().toEqualTypeOf<Core.AnalyticsExportRow>();
    expectTypeOf<Client.App>().toEqualTypeOf<Core.App>();
    expectTypeOf<Client.Domain>().toEqualTypeOf<Core.Domain>();
    expectTypeOf<Client.ErrorCode>().toEqualTypeOf<Core.ErrorEnvelope['error']['code']>();
    expectTypeOf<Client.ErrorDetail>().toEqualTypeOf<Core.ErrorEnvelope['error']['details'][number]>();
  });

  it('request bodies and queries', () => {
    expectTypeOf<Client.RegisterInput>().toEqualTypeOf<z.input<typeof Core.registerBodySchema>>();
    expectTypeOf<Client.LoginInput>().toEqualTypeOf<z.input<typeof Core.loginBodySchema>>();
    expectTypeOf<Client.CreateApiKeyInput>().toEqualTypeOf<z.input<typeof Core.createApiKeyBodySchema>>();
    expectTypeOf<Client.CreateLinkInput>().toEqualTypeOf<WithDates<Core.CreateLinkBody, 'expirationDate'>>();
    expectTypeOf<Client.UpdateLinkInput>().toEqualTypeOf<WithDates<Core.UpdateLinkBody, 'expirationDate'>>();
    expectTypeOf<Client.CreateAppInput>().toEqualTypeOf<Core.CreateAppBody>();
    expectTypeOf<Client.CreateDomainInput>().toEqualTypeOf<Core.CreateDomainBody>();
    expectTypeOf<Client.UpdateDomainInput>().toEqualTypeOf<z.input<typeof Core.updateDomainBodySchema>>();
    expectTypeOf<Client.LinkSortField>().toEqualTypeOf<Core.LinkSortField>();
    // The API coerces page and limit from the query string (its input type is unknown) and reads
    // include from text; the client sends numbers and names the extras.
    expectTypeOf<Client.ListLinksQuery>().toEqualTypeOf<
      Flat<Omit<z.input<typeof Core.listLinksQuerySchema>, 'page' | 'limit' | 'include'> & {
        page?: number; limit?: number; include?: Core.LinkListExtra | Core.LinkListExtra[];
      }>
    >();
    expectTypeOf<Client.LinkListExtra>().toEqualTypeOf<Core.LinkListExtra>();
    expectTypeOf<Client.TimeBucket>().toEqualTypeOf<Core.TimeBucket>();
    expectTypeOf<Client.LinkAnalyticsQuery>().toEqualTypeOf<WithDates<z.input<typeof Core.linkAnalyticsQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.QrQuery>().toEqualTypeOf<Flat<Omit<z.input<typeof Core.linkQrQuerySchema>, 'size' | 'margin'> & { size?: number; margin?: number }>>();
    expectTypeOf<Client.AnalyticsExportQuery>().toEqualTypeOf<WithDates<z.input<typeof Core.analyticsExportQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.AccountExportQuery>().toEqualTypeOf<WithDates<z.input<typeof Core.accountExportQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.SummaryAnalyticsQuery>().toEqualTypeOf<WithDates<z.input<typeof Core.summaryAnalyticsQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.ExportLayout>().toEqualTypeOf<Core.ExportLayout>();
    expectTypeOf<{ links: Client.CreateLinkInput[] }>().toEqualTypeOf<{ links: WithDates<Core.CreateLinkBody, 'expirationDate'>[] }>();
  });
});
