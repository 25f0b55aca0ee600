// The client writes its wire types out (so its declarations need neither @deeplink/core nor zod);
// these checks tie each one to the shared zod schema. They run in the typecheck
// (`tsc -p packages/client/tsconfig.json`): a drift fails it.
import type * as Analytics from '@deeplink/core/schemas/analytics';
import type * as Auth from '@deeplink/core/schemas/auth';
import type * as Common from '@deeplink/core/schemas/common';
import type * as Links from '@deeplink/core/schemas/links';
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as Client from '../src/types.js';

/** The client accepts a Date where the API takes an ISO string, and sends its ISO string. */
type WithDates<T, K extends keyof T> = Flat<Omit<T, K> & { [P in keyof Pick<T, K>]: Pick<T, K>[P] | Date }>;
type Flat<T> = { [K in keyof T]: T[K] };

describe('client types match the shared schemas', () => {
  it('responses', () => {
    expectTypeOf<Client.User>().toEqualTypeOf<Auth.User>();
    expectTypeOf<Client.AuthResult>().toEqualTypeOf<Auth.AuthResult>();
    expectTypeOf<Client.ApiKey>().toEqualTypeOf<Auth.ApiKey>();
    expectTypeOf<Client.ApiKeyListItem>().toEqualTypeOf<Auth.ApiKeyListItem>();
    expectTypeOf<Client.LinkListItem>().toEqualTypeOf<Links.LinkListItem>();
    expectTypeOf<Client.TagCount>().toEqualTypeOf<z.infer<typeof Links.tagListResponseSchema>['data']['tags'][number]>();
    expectTypeOf<Client.AndroidLink>().toEqualTypeOf<Links.AndroidLink>();
    expectTypeOf<Client.IosLink>().toEqualTypeOf<Links.IosLink>();
    expectTypeOf<Client.Link>().toEqualTypeOf<Links.Link>();
    expectTypeOf<Client.LinkSummary>().toEqualTypeOf<Links.LinkSummary>();
    expectTypeOf<Client.Pagination>().toEqualTypeOf<Links.Pagination>();
    expectTypeOf<Client.LinkPage>().toEqualTypeOf<z.infer<typeof Links.linkListResponseSchema>['data']>();
    expectTypeOf<Client.LinkAnalytics>().toEqualTypeOf<Analytics.LinkAnalytics>();
    expectTypeOf<Client.SummaryAnalytics>().toEqualTypeOf<Analytics.SummaryAnalytics>();
    expectTypeOf<Client.AnalyticsExportRow>().toEqualTypeOf<Analytics.AnalyticsExportRow>();
    expectTypeOf<Client.ErrorCode>().toEqualTypeOf<Common.ErrorEnvelope['error']['code']>();
    expectTypeOf<Client.ErrorDetail>().toEqualTypeOf<Common.ErrorEnvelope['error']['details'][number]>();
  });

  it('request bodies and queries', () => {
    expectTypeOf<Client.RegisterInput>().toEqualTypeOf<z.input<typeof Auth.registerBodySchema>>();
    expectTypeOf<Client.LoginInput>().toEqualTypeOf<z.input<typeof Auth.loginBodySchema>>();
    expectTypeOf<Client.CreateApiKeyInput>().toEqualTypeOf<z.input<typeof Auth.createApiKeyBodySchema>>();
    expectTypeOf<Client.CreateLinkInput>().toEqualTypeOf<WithDates<Links.CreateLinkBody, 'expirationDate'>>();
    expectTypeOf<Client.UpdateLinkInput>().toEqualTypeOf<WithDates<Links.UpdateLinkBody, 'expirationDate'>>();
    expectTypeOf<Client.LinkSortField>().toEqualTypeOf<Links.LinkSortField>();
    // The API coerces page and limit from the query string (its input type is unknown) and reads
    // include from text; the client sends numbers and names the extras.
    expectTypeOf<Client.ListLinksQuery>().toEqualTypeOf<
      Flat<Omit<z.input<typeof Links.listLinksQuerySchema>, 'page' | 'limit' | 'include'> & {
        page?: number; limit?: number; include?: Links.LinkListExtra | Links.LinkListExtra[];
      }>
    >();
    expectTypeOf<Client.LinkListExtra>().toEqualTypeOf<Links.LinkListExtra>();
    expectTypeOf<Client.TimeBucket>().toEqualTypeOf<Analytics.TimeBucket>();
    expectTypeOf<Client.LinkAnalyticsQuery>().toEqualTypeOf<WithDates<z.input<typeof Analytics.linkAnalyticsQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.AnalyticsExportQuery>().toEqualTypeOf<WithDates<z.input<typeof Analytics.analyticsExportQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.AccountExportQuery>().toEqualTypeOf<WithDates<z.input<typeof Analytics.accountExportQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.SummaryAnalyticsQuery>().toEqualTypeOf<WithDates<z.input<typeof Analytics.summaryAnalyticsQuerySchema>, 'startDate' | 'endDate'>>();
    expectTypeOf<Client.ExportLayout>().toEqualTypeOf<Analytics.ExportLayout>();
    expectTypeOf<{ links: Client.CreateLinkInput[] }>().toEqualTypeOf<{ links: WithDates<Links.CreateLinkBody, 'expirationDate'>[] }>();
  });
});
