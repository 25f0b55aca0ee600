// The client's public types. The wire types are generated from the zod schemas of @deeplink/core
// into generated/wire-types.ts (`npm run generate -w packages/client`); here they get the client's
// names, and where the client deliberately differs from the wire (a Date for an ISO string, numbers
// for query-string numbers, an array for a comma-separated list) a small wrapper says how.
import type * as Wire from './generated/wire-types.js';

/** Replaces the types of `K` with the same type or a Date: the client sends a Date as its ISO string. */
type WithDates<T, K extends keyof T> = Flat<Omit<T, K> & { [P in K]: T[P] | Date }>;
type Flat<T> = { [K in keyof T]: T[K] };

/** An account. The password is never returned. */
export type User = Wire.User;

/** What register and login return: the user and a login token (JWT, valid 24 h by default). */
export type AuthResult = Wire.AuthResult;

/** Body of `auth.register()`. */
export type RegisterInput = Wire.RegisterBody;

/** Body of `auth.login()`. */
export type LoginInput = Wire.LoginBody;

/** Body of `auth.changePassword()`; the new password has 8-128 characters. */
export type ChangePasswordInput = Wire.ChangePasswordBody;

/** Body of `apiKeys.create()`. */
export type CreateApiKeyInput = Wire.CreateApiKeyBody;

/** An API key as `apiKeys.list()` shows it: never the secret. */
export type ApiKeyListItem = Wire.ApiKeyListItem;

/** An API key; `key` is the secret and is returned only when the key is created. */
export type ApiKey = Wire.ApiKey;

/** Android destination of a link. */
export type AndroidLink = Wire.AndroidLink;

/** iOS destination of a link. */
export type IosLink = Wire.IosLink;

/** What social networks and chat apps show for a link (served to their link-preview crawlers). */
export type SocialPreview = Wire.SocialPreview;

/** A dynamic link; timestamps are ISO 8601 strings in UTC. */
export type Link = Wire.Link;

/** A link as the list returns it without `include`: no platform fields. */
export type LinkSummary = Wire.LinkSummary;

/** What `include` can add to list items. */
export type LinkListExtra = Wire.LinkListExtra;

/** A list item: the summary, plus `clicks` and `tags` when the query's `include` asks for them. */
export type LinkListItem = Wire.LinkListItem;

/** A tag with how many of the caller's links carry it. */
export type TagCount = Wire.TagCount;

/** Body of `links.create()` (and each link of `links.bulkCreate()`). A Date for expirationDate is sent as its ISO string. */
export type CreateLinkInput = WithDates<Wire.CreateLinkBody, 'expirationDate'>;

/**
 * Body of `links.update()`: a merge patch. Omitted fields keep their values, nested objects merge
 * field by field, and `null` clears an optional field. A Date for expirationDate is sent as its ISO string.
 */
export type UpdateLinkInput = WithDates<Wire.UpdateLinkBody, 'expirationDate'>;

/** Fields `links.list()` can sort by. */
export type LinkSortField = Wire.LinkSortField;

/**
 * Query of `links.list()`; defaults: page 1, limit 10 (max 100), newest first. The API reads page
 * and limit from the query string and `include` as comma-separated text; the client takes numbers
 * and names the extras.
 */
export type ListLinksQuery = Flat<
  Omit<Wire.ListLinksQuery, 'page' | 'limit' | 'include'> & {
    page?: number;
    limit?: number;
    /** Extra fields on each item: `clicks` (all-time clicks), `tags` (always an array). */
    include?: LinkListExtra | LinkListExtra[];
  }
>;

/** Where a page sits in the whole list. */
export type Pagination = Wire.Pagination;

/** One page of links. */
export type LinkPage = Wire.LinkPage;

/** Granularity of an analytics time series. */
export type TimeBucket = Wire.TimeBucket;

/** Range and granularity of a link report; a Date is sent as its ISO string. Default: last 30 days, by day, in UTC. */
export type LinkAnalyticsQuery = WithDates<Wire.LinkAnalyticsQuery, 'startDate' | 'endDate'>;

/** Format of `analytics.export()`. */
export type ExportFormat = Wire.ExportFormat;

/**
 * Shape of an export: `long` (default) has one row per bucket and dimension value; `wide` one row
 * per link and bucket with the breakdowns as columns (WideExportRow).
 */
export type ExportLayout = Wire.ExportLayout;

/** Query of `analytics.export(id, query)`; format defaults to csv, layout to long. */
export type AnalyticsExportQuery = WithDates<Wire.AnalyticsExportQuery, 'startDate' | 'endDate'>;

/** Query of `analytics.export(query)`, over every link of the account, or those carrying `tag`. */
export type AccountExportQuery = WithDates<Wire.AccountExportQuery, 'startDate' | 'endDate'>;

/** Filters of `analytics.summary()`: one tag's links, and a range (without one, all time). */
export type SummaryAnalyticsQuery = WithDates<Wire.SummaryAnalyticsQuery, 'startDate' | 'endDate'>;

/** Clicks of one link over a range. */
export type LinkAnalytics = Wire.LinkAnalytics;

/** Totals over the whole account. */
export type SummaryAnalytics = Wire.SummaryAnalytics;

/** One row of an export: the clicks of one dimension value (or the bucket total) in one bucket. */
export type AnalyticsExportRow = Wire.AnalyticsExportRow;

/**
 * Query of `links.qr()`: svg (default) or png, width in pixels (64-2048, default 512), quiet zone in
 * modules (0-16, default 4), the modules' and the background's colours (`#rrggbb`).
 */
export type QrQuery = Wire.LinkQrQuery;

/** What `links.slugAvailability()` answers: whether the slug is free on the domain, and the short URL it would be. */
export type SlugAvailability = Wire.SlugAvailability;

/** Options of `links.qrWithLogo()`: those of `links.qr()` and `logo`, a PNG in base64. */
export type QrRenderOptions = Wire.LinkQrRender;

/** A row of the account-wide long export: a per-link row led by its link's id. */
export type AccountExportRow = Wire.AccountExportRow;

// The wide row is written out here: its country, browser, os and referrer columns depend on the
// data, which takes a template-literal index signature the generated types cannot express beside
// the text columns (the OpenAPI document describes it as AnalyticsWideExportRow).

/** The wide export's app event columns: `redirect_`, `app_install_`, `app_first_open_`, `app_re_open_` + `android`, `ios`, `desktop`, `other`. */
export type WideAppEventColumns = {
  [column in `${'redirect' | 'app_install' | 'app_first_open' | 'app_re_open'}_${'android' | 'ios' | 'desktop' | 'other'}`]: number;
};

/**
 * A row of a wide export: one link in one bucket. Besides these columns it has the app events per
 * platform (`redirect_android` … `app_re_open_other`), then `country_<code>`,
 * `browser_<name>`, `os_<name>` and `referrer_<host>` columns for the export's top 10 of each, and
 * `country_Other`, `browser_Other`, `os_Other` and `referrer_Other` for the rest.
 */
export interface WideExportRow extends WideAppEventColumns {
  link_id: string;
  title: string;
  short_url: string;
  bucket_start: string;
  clicks: number;
  unique_clicks: number;
  android: number;
  ios: number;
  desktop: number;
  mobile: number;
  desktop_device: number;
  [column: `country_${string}` | `browser_${string}` | `os_${string}` | `referrer_${string}`]: number;
}

/** Error codes the API answers with. */
export type ErrorCode = Wire.ErrorCode;

/** One problem with one field of a request, `field` as a dotted path (`androidLink.appPackageName`). */
export type ErrorDetail = Wire.ErrorDetail;

/** An app of the account: an iOS app (teamId, bundleId) or an Android app (packageName, fingerprints). */
export type App = Wire.App;

/** An app with its publishable app key in full (`key`): returned by `apps.create()` and `apps.rotateKey()` only. */
export type AppWithKey = Wire.AppWithKey;

/** Body of `apps.create()`. */
export type CreateAppInput = Wire.CreateAppBody;

/** Body of `apps.update()`: the probabilistic install match's settings. */
export type UpdateAppInput = Wire.UpdateAppBody;

/** A custom short-link domain: pending until its TXT record holds `verification.value`, then active. */
export type Domain = Wire.Domain;

/** Body of `domains.create()`. */
export type CreateDomainInput = Wire.CreateDomainBody;

/** Body of `domains.update()`. */
export type UpdateDomainInput = Wire.UpdateDomainBody;

/** What a webhook endpoint can subscribe to: `link.created`, `link.updated`, `link.deleted`, `click`. */
export type WebhookEventType = Wire.WebhookEventType;

/** A webhook endpoint of the account: never its secret. */
export type Webhook = Wire.Webhook;

/** A webhook endpoint with its signing secret (`whsec_…`): only from `webhooks.create()` and `webhooks.rotateSecret()`. */
export type WebhookWithSecret = Wire.WebhookWithSecret;

/** Body of `webhooks.create()`. */
export type CreateWebhookInput = Wire.CreateWebhookBody;

/** Body of `webhooks.update()`: the fields sent change; `description: null` removes it. */
export type UpdateWebhookInput = Wire.UpdateWebhookBody;

/** One delivery of an event to an endpoint: its status, attempts and the last answer. */
export type WebhookDelivery = Wire.WebhookDelivery;

/** One page of an endpoint's delivery log, newest first. */
export type WebhookDeliveryPage = Wire.WebhookDeliveryPage;

/** Query of `webhooks.deliveries()`. */
export type ListWebhookDeliveriesQuery = Wire.ListWebhookDeliveriesQuery;

/** The body a webhook endpoint receives, told apart by `type`; verify its `Webhook-Signature` before trusting it (docs/webhooks.md). */
export type WebhookEvent = Wire.WebhookEvent;

/** Body of `imports.create()`: the file's format, the domain its links go on, a dry run, and the generic format's column mapping. */
export type CreateImportInput = Wire.CreateImportBody;

/** An import of links: its status, the bytes of its file read, its rows done and the count of each outcome. */
export type Import = Wire.Import;

/** One page of the report of an import: what became of each row, by line. */
export type ImportRowPage = Wire.ImportRowPage;

/** Query of `imports.rows()`. */
export type ListImportRowsQuery = Wire.ListImportRowsQuery;
