// The wire types of the API. They mirror the zod schemas in @deeplink/core/schemas (test/types.test.ts
// fails the typecheck when they drift apart) but are written out here, so the published declarations
// need neither @deeplink/core nor zod.

/** An account. The password is never returned. */
export interface User {
  id: string;
  name: string;
  email: string;
}

/** What register and login return: the user and a login token (JWT, valid 24 h by default). */
export interface AuthResult {
  user: User;
  token: string;
}

/** Body of `auth.register()`. */
export interface RegisterInput {
  name: string;
  email: string;
  password: string;
}

/** Body of `auth.login()`. */
export interface LoginInput {
  email: string;
  password: string;
}

/** Body of `auth.changePassword()`. */
export interface ChangePasswordInput {
  currentPassword: string;
  /** 8-128 characters. */
  newPassword: string;
}

/** Body of `apiKeys.create()`. */
export interface CreateApiKeyInput {
  name: string;
}

/** An API key as `apiKeys.list()` shows it: never the secret. */
export interface ApiKeyListItem {
  id: string;
  name: string;
  /** The key's first characters (`dlk_` and 8 more), to tell keys apart. */
  prefix: string;
  createdAt: string;
  /** When the key last authenticated a request, updated at most once a minute; null if never. */
  lastUsedAt: string | null;
}

/** An API key; `key` is the secret and is returned only when the key is created. */
export interface ApiKey {
  id: string;
  name: string;
  key: string;
  createdAt: string;
}

/** Android destination of a link. */
export interface AndroidLink {
  url: string;
  appPackageName: string;
  minimumVersion?: string;
  fallbackUrl?: string;
}

/** iOS destination of a link. */
export interface IosLink {
  url: string;
  bundleId: string;
  minimumVersion?: string;
  fallbackUrl?: string;
}

/** A dynamic link; timestamps are ISO 8601 strings in UTC. */
/** What social networks and chat apps show for a link (served to their link-preview crawlers). */
export interface SocialPreview {
  title: string;
  description?: string;
  /** An absolute http(s) URL of the card's image. */
  imageUrl?: string;
}

export interface Link {
  id: string;
  url: string;
  title: string;
  defaultUrl: string;
  androidLink?: AndroidLink;
  iosLink?: IosLink;
  desktopUrl?: string;
  customParameters?: Record<string, string>;
  expirationDate?: string;
  /** Lower-case tags; absent when the link has none. */
  tags?: string[];
  /** Where the link sends visitors once it has expired (instead of the 410 page). */
  expiredUrl?: string;
  socialPreview?: SocialPreview;
  /** The custom domain the link is on; absent on the default domain. */
  domain?: string;
  createdAt: string;
  updatedAt: string;
}

/** A link as the list returns it: without platform fields. */
export type LinkSummary = Pick<Link, 'id' | 'url' | 'title' | 'defaultUrl' | 'createdAt' | 'updatedAt'>;

/** What `include` can add to list items. */
export type LinkListExtra = 'clicks' | 'tags';

/** A list item: the summary, plus `clicks` and `tags` when the query's `include` asks for them. */
export interface LinkListItem extends LinkSummary {
  /** All-time clicks (include `clicks`). */
  clicks?: number;
  /** The link's tags, [] when none (include `tags`). */
  tags?: string[];
}

/** A tag with how many of the caller's links carry it. */
export interface TagCount {
  name: string;
  links: number;
}

/** Body of `links.create()`. A Date for expirationDate is sent as its ISO string. */
export interface CreateLinkInput {
  title: string;
  defaultUrl: string;
  androidLink?: AndroidLink;
  iosLink?: IosLink;
  desktopUrl?: string;
  customParameters?: Record<string, string>;
  expirationDate?: string | Date;
  /** Up to 10 tags of 1-32 characters `a-z 0-9 - _` (lower-cased, duplicates removed). */
  tags?: string[];
  /** Where the link sends visitors once it has expired (instead of the 410 page). */
  expiredUrl?: string;
  /** What link-preview crawlers (Facebook, Slack, WhatsApp…) show for the link. */
  socialPreview?: SocialPreview;
  /** Custom short code instead of a generated one. */
  slug?: string;
  /** One of your active custom domains (the default domain when omitted); fixed once the link exists. */
  domain?: string;
}

/**
 * Body of `links.update()`: a merge patch. Omitted fields keep their values, nested objects merge
 * field by field, and `null` clears an optional field.
 */
export interface UpdateLinkInput {
  title?: string;
  defaultUrl?: string;
  androidLink?: Partial<NullableOptional<AndroidLink>> | null;
  iosLink?: Partial<NullableOptional<IosLink>> | null;
  desktopUrl?: string | null;
  customParameters?: Record<string, string | null> | null;
  expirationDate?: string | Date | null;
  /** Replaces every tag; null clears them. */
  tags?: string[] | null;
  expiredUrl?: string | null;
  socialPreview?: Partial<NullableOptional<SocialPreview>> | null;
}

type NullableOptional<T> = { [K in keyof T]: undefined extends T[K] ? T[K] | null : T[K] };

/** Fields `links.list()` can sort by. */
export type LinkSortField = 'createdAt' | 'updatedAt' | 'title' | 'defaultUrl';

/** Query of `links.list()`; defaults: page 1, limit 10 (max 100), newest first. */
export interface ListLinksQuery {
  page?: number;
  limit?: number;
  sortBy?: LinkSortField;
  sortDirection?: 'asc' | 'desc';
  /** Only links carrying this tag; with several, links carrying all of them. */
  tag?: string | string[];
  /** Case-insensitive search in the title, default URL and short code. */
  q?: string;
  /** Extra fields on each item. */
  include?: LinkListExtra | LinkListExtra[];
}

/** Where a page sits in the whole list. */
export interface Pagination {
  total: number;
  page: number;
  limit: number;
  pages: number;
}

/** One page of links. */
export interface LinkPage {
  links: LinkListItem[];
  pagination: Pagination;
}

/** Granularity of an analytics time series. */
export type TimeBucket = 'hour' | 'day' | 'week' | 'month';

/** Range and granularity of a link report; a Date is sent as its ISO string. Default: last 30 days, by day, in UTC. */
export interface LinkAnalyticsQuery {
  startDate?: string | Date;
  endDate?: string | Date;
  timeBucket?: TimeBucket;
  /**
   * IANA time zone (`Europe/Paris`): day, week and month buckets start at its local midnight and
   * bare dates are its local dates; default UTC. Zones off the whole hour (Asia/Kolkata) are refused.
   */
  timezone?: string;
}

/** Format of `analytics.export()`. */
export type ExportFormat = 'csv' | 'json';

/**
 * Shape of an export: `long` (default) has one row per bucket and dimension value; `wide` one row
 * per link and bucket with the breakdowns as columns (WideExportRow).
 */
export type ExportLayout = 'long' | 'wide';

/** Query of `analytics.export(id, query)`; format defaults to csv, layout to long. */
export interface AnalyticsExportQuery extends LinkAnalyticsQuery {
  format?: ExportFormat;
  layout?: ExportLayout;
}

/** Query of `analytics.export(query)`, over every link of the account, or those carrying `tag`. */
export interface AccountExportQuery extends AnalyticsExportQuery {
  tag?: string;
}

/** Filters of `analytics.summary()`: one tag's links, and a range (without one, all time). */
export interface SummaryAnalyticsQuery {
  tag?: string;
  startDate?: string | Date;
  endDate?: string | Date;
  /** IANA time zone of bare dates; default UTC. */
  timezone?: string;
}

/** Clicks of one link over a range. */
export interface LinkAnalytics {
  totalClicks: number;
  uniqueClicks: number;
  /** Visits of link-preview crawlers (Facebook, Slack, WhatsApp…) in the range; never counted as clicks. */
  previews: number;
  platforms: Record<string, number>;
  countries: Record<string, number>;
  browsers: Record<string, number>;
  devices: Record<string, number>;
  referrers: Record<string, number>;
  /** One entry per bucket; `date` is the bucket's start as a UTC instant, `uniqueClicks` its distinct visitors. */
  timeSeries: { date: string; clicks: number; uniqueClicks: number }[];
  /** The resolved range: startDate inclusive, endDate exclusive. */
  range: { startDate: string; endDate: string; timeBucket: TimeBucket };
}

/** Totals over the whole account. */
export interface SummaryAnalytics {
  totalLinks: number;
  totalClicks: number;
  activeLinks: number;
  topLinks: { id: string; title: string; clicks: number }[];
}

/** One row of an export: the clicks of one dimension value (or the bucket total) in one bucket. */
export interface AnalyticsExportRow {
  bucket: string;
  dimension: string;
  value: string;
  clicks: number;
}

/** Query of `links.qr()`: svg (default) or png, width in pixels (64-2048, default 512), quiet zone in modules (0-16, default 4). */
export interface QrQuery {
  format?: 'svg' | 'png';
  size?: number;
  margin?: number;
}

/** A row of the account-wide long export: a per-link row led by its link's id. */
export interface AccountExportRow extends AnalyticsExportRow {
  link_id: string;
}

/**
 * A row of a wide export: one link in one bucket. Besides these columns it has `country_<code>`
 * and `browser_<name>` columns for the export's top 10 of each, and `country_Other`/`browser_Other`.
 */
export interface WideExportRow {
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
  [column: `country_${string}` | `browser_${string}`]: number;
}

/** Error codes the API answers with. */
export type ErrorCode = 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'INVALID_REQUEST' | 'RATE_LIMITED' | 'INTERNAL_ERROR';

/** One problem with one field of a request, `field` as a dotted path (`androidLink.appPackageName`). */
export interface ErrorDetail {
  field: string;
  message: string;
}

/** An app of the account: an iOS app (teamId, bundleId) or an Android app (packageName, fingerprints). */
export interface App {
  id: string;
  platform: 'ios' | 'android';
  name?: string;
  teamId?: string;
  bundleId?: string;
  appStoreId?: string;
  packageName?: string;
  sha256CertFingerprints?: string[];
  createdAt: string;
}

/** Body of `apps.create()`. */
export type CreateAppInput =
  | { platform: 'ios'; name?: string; teamId: string; bundleId: string; appStoreId?: string }
  | { platform: 'android'; name?: string; packageName: string; sha256CertFingerprints: string[] };

/** A custom short-link domain: pending until its TXT record holds `verification.value`, then active. */
export interface Domain {
  id: string;
  hostname: string;
  status: 'pending' | 'active';
  verification: { type: 'TXT'; name: string; value: string };
  notFoundUrl?: string;
  verifiedAt?: string;
  createdAt: string;
}

/** Body of `domains.create()`. */
export interface CreateDomainInput {
  hostname: string;
  /** Where unknown codes on the domain go (instead of the 404 page). */
  notFoundUrl?: string;
}

/** Body of `domains.update()`. */
export interface UpdateDomainInput {
  /** null: the 404 page again. */
  notFoundUrl: string | null;
}
