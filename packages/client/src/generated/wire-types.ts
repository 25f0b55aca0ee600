// Generated from the zod schemas of @deeplink/core by scripts/generate-types.ts: do not edit.
// Regenerate with `npm run generate -w packages/client` (the build does it, and a test fails while
// this file is stale). It imports nothing, so the published declarations need neither the core nor zod.

/** An account. The password is never returned. */
export interface User {
  id: string;
  name: string;
  email: string;
}

/** What register and login return: the user and a login token (a JWT). */
export interface AuthResult {
  user: User;
  token: string;
}

/** Body of POST /auth/register. */
export interface RegisterBody {
  name: string;
  email: string;
  password: string;
}

/** Body of POST /auth/login. */
export interface LoginBody {
  email: string;
  password: string;
}

/** Body of POST /auth/password. */
export interface ChangePasswordBody {
  currentPassword: string;
  newPassword: string;
}

/** Body of POST /auth/api-keys. */
export interface CreateApiKeyBody {
  name: string;
}

/** An API key as it is created: the only time `key`, the secret, is returned. */
export interface ApiKey {
  id: string;
  name: string;
  /** The secret; returned only in this response */
  key: string;
  createdAt: string;
}

/** An API key as the key list shows it: never the secret. */
export interface ApiKeyListItem {
  id: string;
  name: string;
  /**
   * The first characters of the key, to tell keys apart (only `dlk_` for keys made before prefixes were kept)
   */
  prefix: string;
  createdAt: string;
  /**
   * When the key last authenticated a request, to the minute (updated at most once a minute); null if never
   */
  lastUsedAt: string | null;
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
  /** The URL that opens the iPad app, when iPads have an app of their own (with ipadBundleId) */
  ipadUrl?: string;
  /** The bundle identifier of the iPad app (with ipadUrl) */
  ipadBundleId?: string;
  /** Where iPads without the app go, instead of fallbackUrl */
  ipadFallbackUrl?: string;
  /** true: iOS visitors are redirected at once, without the "open in the app" page (see docs/redirect.md) */
  skipAppPage?: boolean;
}

/** What social networks and chat apps show for a link (served to their link-preview crawlers). */
export interface SocialPreview {
  title: string;
  description?: string;
  imageUrl?: string;
}

/** A dynamic link; timestamps are ISO 8601 strings in UTC. */
export interface Link {
  id: string;
  /** The short URL, on SHORT_URL_BASE */
  url: string;
  title: string;
  defaultUrl: string;
  androidLink?: AndroidLink;
  iosLink?: IosLink;
  desktopUrl?: string;
  customParameters?: Record<string, string>;
  expirationDate?: string;
  /** The link's tags, lower-case; absent when it has none */
  tags?: string[];
  /** Where the link sends visitors once it has expired */
  expiredUrl?: string;
  socialPreview?: SocialPreview;
  /** The click cap, when the link has one */
  clickCap?: number;
  /** Where visitors go past the click cap */
  capOverflowUrl?: string;
  /** The custom domain the link is on; absent on the default domain */
  domain?: string;
  /** true: visitors must enter the password set with `password` (never answered) first */
  passwordProtected: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A link without its platform fields. */
export interface LinkSummary {
  id: string;
  /** The short URL, on SHORT_URL_BASE */
  url: string;
  title: string;
  defaultUrl: string;
  createdAt: string;
  updatedAt: string;
}

/** An item of the link list: the summary, plus `clicks` and `tags` when `include` asks for them. */
export interface LinkListItem {
  id: string;
  /** The short URL, on SHORT_URL_BASE */
  url: string;
  title: string;
  defaultUrl: string;
  createdAt: string;
  updatedAt: string;
  /** All-time clicks (with include=clicks) */
  clicks?: number;
  /** The link's tags, [] when none (with include=tags) */
  tags?: string[];
  /** When the link expires, for links with an expiry (with include=expiry) */
  expirationDate?: string;
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

/** A tag with how many of the caller's links carry it. */
export interface TagCount {
  name: string;
  /** How many of the caller's links carry the tag */
  links: number;
}

/** Body of POST /links. */
export interface CreateLinkBody {
  title: string;
  defaultUrl: string;
  androidLink?: AndroidLink;
  iosLink?: IosLink;
  desktopUrl?: string;
  customParameters?: Record<string, string>;
  expirationDate?: string;
  /** Up to 10 tags grouping the link (a campaign, a channel); stored lower-case, duplicates removed */
  tags?: string[];
  /** Where the link sends visitors once it has expired (a 302 instead of the 410 page) */
  expiredUrl?: string;
  socialPreview?: SocialPreview;
  /**
   * After this many clicks visitors go to capOverflowUrl, or get the 410 page without one (see
   * docs/redirect.md)
   */
  clickCap?: number;
  /** Where visitors go once the link has had clickCap clicks (https only) */
  capOverflowUrl?: string;
  /**
   * Visitors must enter it before the link sends them anywhere (6-128 characters). Write-only: the link
   * answers passwordProtected instead
   */
  password?: string;
  slug?: string;
  /** One of your active custom domains; the default domain when omitted. Fixed once the link exists */
  domain?: string;
}

/** Body of PUT /links/:id: a JSON Merge Patch; `null` clears an optional field. */
export interface UpdateLinkBody {
  title?: string;
  defaultUrl?: string;
  androidLink?: {
    url?: string;
    appPackageName?: string;
    minimumVersion?: string | null;
    fallbackUrl?: string | null;
  } | null;
  iosLink?: {
    url?: string;
    bundleId?: string;
    minimumVersion?: string | null;
    fallbackUrl?: string | null;
    ipadUrl?: string | null;
    ipadBundleId?: string | null;
    ipadFallbackUrl?: string | null;
    skipAppPage?: boolean | null;
  } | null;
  desktopUrl?: string | null;
  customParameters?: Record<string, string | null> | null;
  expirationDate?: string | null;
  /** Replaces the whole list of tags; null or [] removes them all */
  tags?: string[] | null;
  expiredUrl?: string | null;
  socialPreview?: {
    title?: string;
    description?: string | null;
    imageUrl?: string | null;
  } | null;
  /** A new cap (the clicks counted so far are kept); null removes it */
  clickCap?: number | null;
  capOverflowUrl?: string | null;
  /** A new password for the link; null removes it (the link opens for everyone). Omitted: unchanged */
  password?: string | null;
}

/** Fields the link list can sort by. */
export type LinkSortField = 'createdAt' | 'updatedAt' | 'title' | 'defaultUrl' | 'clicks';

/** What `include` can add to the items of the link list. */
export type LinkListExtra = 'clicks' | 'tags' | 'expiry';

/** Query of GET /links. */
export interface ListLinksQuery {
  /**
   * Page number, from 1; a page past the end is an empty list with the real totals
   * @default 1
   */
  page?: number;
  /**
   * Items per page, 1-100
   * @default 10
   */
  limit?: number;
  /**
   * Field to sort by; ties are broken by id, so pages are stable
   * @default "createdAt"
   */
  sortBy?: 'createdAt' | 'updatedAt' | 'title' | 'defaultUrl' | 'clicks';
  /**
   * Sort direction
   * @default "desc"
   */
  sortDirection?: 'asc' | 'desc';
  /**
   * Only links carrying this tag; repeat it (or separate with commas) to require several, all of which must
   * match
   */
  tag?: string | string[];
  /** Case-insensitive search in the title, the default URL and the short code; empty means no search */
  q?: string;
  /** Extra fields on each item, comma-separated: clicks (all-time clicks), tags (always an array) */
  include?: string | string[];
}

/** Granularity of an analytics time series. */
export type TimeBucket = 'hour' | 'day' | 'week' | 'month';

/** Query of GET /analytics/links/:id. */
export interface LinkAnalyticsQuery {
  /**
   * First day (a bare date: from its local midnight) or instant of the range, inclusive; default: 30 days
   * before the end of the range
   */
  startDate?: string;
  /** Last day of the range, included whole, or an instant, included; default today */
  endDate?: string;
  /**
   * Granularity of timeSeries (and of export rows): hour, day, week (ISO, from Monday) or month
   * @default "day"
   */
  timeBucket?: 'hour' | 'day' | 'week' | 'month';
  /**
   * IANA time zone: day, week and month buckets start at its local midnight (a day may last 23 or 25 hours
   * around a DST change) and bare dates in startDate/endDate are its local dates; timeSeries dates stay UTC
   * instants. Zones a whole number of hours from UTC only (Asia/Kolkata, UTC+05:30, is refused with 400):
   * clicks are counted per UTC hour
   * @default "UTC"
   */
  timezone?: string;
  /**
   * Only clicks whose platform is one of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (platform=a&platform=b), at most 20 values of at most 200 characters; Other
   * is refused. Different filter parameters must all match
   */
  platform?: string | string[];
  /**
   * Only clicks whose platform is none of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (notPlatform=a&notPlatform=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notPlatform?: string | string[];
  /**
   * Only clicks whose country is one of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (country=a&country=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  country?: string | string[];
  /**
   * Only clicks whose country is none of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (notCountry=a&notCountry=b), at most 20 values of at most 200 characters; Other is refused.
   * Different filter parameters must all match
   */
  notCountry?: string | string[];
  /**
   * Only clicks whose browser is one of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (browser=a&browser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  browser?: string | string[];
  /**
   * Only clicks whose browser is none of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (notBrowser=a&notBrowser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notBrowser?: string | string[];
  /**
   * Only clicks whose os is one of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (os=a&os=b), at most 20 values of at most 200 characters; Other is
   * refused. Different filter parameters must all match
   */
  os?: string | string[];
  /**
   * Only clicks whose os is none of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (notOs=a&notOs=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notOs?: string | string[];
  /**
   * Only clicks whose device is one of these: Mobile or Desktop (any case). Repeat it for several
   * (device=a&device=b), at most 20 values of at most 200 characters; Other is refused. Different filter
   * parameters must all match
   */
  device?: string | string[];
  /**
   * Only clicks whose device is none of these: Mobile or Desktop (any case). Repeat it for several
   * (notDevice=a&notDevice=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  notDevice?: string | string[];
  /**
   * Only clicks whose referrer is one of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (referrer=a&referrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  referrer?: string | string[];
  /**
   * Only clicks whose referrer is none of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (notReferrer=a&notReferrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notReferrer?: string | string[];
}

/** Query of GET /analytics/summary. */
export interface SummaryAnalyticsQuery {
  /** Only the links carrying this tag (links, clicks and top links alike) */
  tag?: string;
  /**
   * Count clicks from this day (its local midnight) or instant on; without startDate and endDate, all time
   */
  startDate?: string;
  /** Count clicks up to this day, included whole, or instant; default today when startDate is given */
  endDate?: string;
  /**
   * IANA time zone: day, week and month buckets start at its local midnight (a day may last 23 or 25 hours
   * around a DST change) and bare dates in startDate/endDate are its local dates; timeSeries dates stay UTC
   * instants. Zones a whole number of hours from UTC only (Asia/Kolkata, UTC+05:30, is refused with 400):
   * clicks are counted per UTC hour
   * @default "UTC"
   */
  timezone?: string;
  /**
   * true: add every dimension's breakdown (platforms, countries, browsers, os, devices, referrers) over the
   * same clicks. It reads a row per link, day and value of the range (all time: of the account's whole
   * history), so it costs far more than the totals on a large account
   * @default "false"
   */
  breakdowns?: 'true' | 'false';
  /**
   * Only clicks whose platform is one of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (platform=a&platform=b), at most 20 values of at most 200 characters; Other
   * is refused. Different filter parameters must all match
   */
  platform?: string | string[];
  /**
   * Only clicks whose platform is none of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (notPlatform=a&notPlatform=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notPlatform?: string | string[];
  /**
   * Only clicks whose country is one of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (country=a&country=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  country?: string | string[];
  /**
   * Only clicks whose country is none of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (notCountry=a&notCountry=b), at most 20 values of at most 200 characters; Other is refused.
   * Different filter parameters must all match
   */
  notCountry?: string | string[];
  /**
   * Only clicks whose browser is one of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (browser=a&browser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  browser?: string | string[];
  /**
   * Only clicks whose browser is none of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (notBrowser=a&notBrowser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notBrowser?: string | string[];
  /**
   * Only clicks whose os is one of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (os=a&os=b), at most 20 values of at most 200 characters; Other is
   * refused. Different filter parameters must all match
   */
  os?: string | string[];
  /**
   * Only clicks whose os is none of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (notOs=a&notOs=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notOs?: string | string[];
  /**
   * Only clicks whose device is one of these: Mobile or Desktop (any case). Repeat it for several
   * (device=a&device=b), at most 20 values of at most 200 characters; Other is refused. Different filter
   * parameters must all match
   */
  device?: string | string[];
  /**
   * Only clicks whose device is none of these: Mobile or Desktop (any case). Repeat it for several
   * (notDevice=a&notDevice=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  notDevice?: string | string[];
  /**
   * Only clicks whose referrer is one of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (referrer=a&referrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  referrer?: string | string[];
  /**
   * Only clicks whose referrer is none of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (notReferrer=a&notReferrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notReferrer?: string | string[];
}

/** Format of an analytics export. */
export type ExportFormat = 'csv' | 'json';

/** Shape of an analytics export. */
export type ExportLayout = 'long' | 'wide';

/** Query of GET /analytics/links/:id/export. */
export interface AnalyticsExportQuery {
  /**
   * First day (a bare date: from its local midnight) or instant of the range, inclusive; default: 30 days
   * before the end of the range
   */
  startDate?: string;
  /** Last day of the range, included whole, or an instant, included; default today */
  endDate?: string;
  /**
   * Granularity of timeSeries (and of export rows): hour, day, week (ISO, from Monday) or month
   * @default "day"
   */
  timeBucket?: 'hour' | 'day' | 'week' | 'month';
  /**
   * IANA time zone: day, week and month buckets start at its local midnight (a day may last 23 or 25 hours
   * around a DST change) and bare dates in startDate/endDate are its local dates; timeSeries dates stay UTC
   * instants. Zones a whole number of hours from UTC only (Asia/Kolkata, UTC+05:30, is refused with 400):
   * clicks are counted per UTC hour
   * @default "UTC"
   */
  timezone?: string;
  /**
   * Only clicks whose platform is one of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (platform=a&platform=b), at most 20 values of at most 200 characters; Other
   * is refused. Different filter parameters must all match
   */
  platform?: string | string[];
  /**
   * Only clicks whose platform is none of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (notPlatform=a&notPlatform=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notPlatform?: string | string[];
  /**
   * Only clicks whose country is one of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (country=a&country=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  country?: string | string[];
  /**
   * Only clicks whose country is none of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (notCountry=a&notCountry=b), at most 20 values of at most 200 characters; Other is refused.
   * Different filter parameters must all match
   */
  notCountry?: string | string[];
  /**
   * Only clicks whose browser is one of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (browser=a&browser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  browser?: string | string[];
  /**
   * Only clicks whose browser is none of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (notBrowser=a&notBrowser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notBrowser?: string | string[];
  /**
   * Only clicks whose os is one of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (os=a&os=b), at most 20 values of at most 200 characters; Other is
   * refused. Different filter parameters must all match
   */
  os?: string | string[];
  /**
   * Only clicks whose os is none of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (notOs=a&notOs=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notOs?: string | string[];
  /**
   * Only clicks whose device is one of these: Mobile or Desktop (any case). Repeat it for several
   * (device=a&device=b), at most 20 values of at most 200 characters; Other is refused. Different filter
   * parameters must all match
   */
  device?: string | string[];
  /**
   * Only clicks whose device is none of these: Mobile or Desktop (any case). Repeat it for several
   * (notDevice=a&notDevice=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  notDevice?: string | string[];
  /**
   * Only clicks whose referrer is one of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (referrer=a&referrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  referrer?: string | string[];
  /**
   * Only clicks whose referrer is none of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (notReferrer=a&notReferrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notReferrer?: string | string[];
  /**
   * csv (RFC 4180, CRLF, a header row) or json (an array of objects keyed by the same column names)
   * @default "csv"
   */
  format?: 'csv' | 'json';
  /**
   * long: one row per bucket and dimension value (bucket, dimension, value, clicks), then per app event and
   * platform (dimension the event, value the platform, clicks the count). wide: one row per link and bucket
   * (link_id, title, short_url, bucket_start, clicks, unique_clicks, android, ios, desktop, mobile,
   * desktop_device, then the app events per platform (redirect_android, …, app_re_open_other), then
   * country_<value>, browser_<value>, os_<value>, referrer_<value> columns for the top 10 of the whole
   * export, with country_Other, browser_Other, os_Other, referrer_Other holding the rest)
   * @default "long"
   */
  layout?: 'long' | 'wide';
}

/** Query of GET /analytics/export, over the whole account. */
export interface AccountExportQuery {
  /**
   * First day (a bare date: from its local midnight) or instant of the range, inclusive; default: 30 days
   * before the end of the range
   */
  startDate?: string;
  /** Last day of the range, included whole, or an instant, included; default today */
  endDate?: string;
  /**
   * Granularity of timeSeries (and of export rows): hour, day, week (ISO, from Monday) or month
   * @default "day"
   */
  timeBucket?: 'hour' | 'day' | 'week' | 'month';
  /**
   * IANA time zone: day, week and month buckets start at its local midnight (a day may last 23 or 25 hours
   * around a DST change) and bare dates in startDate/endDate are its local dates; timeSeries dates stay UTC
   * instants. Zones a whole number of hours from UTC only (Asia/Kolkata, UTC+05:30, is refused with 400):
   * clicks are counted per UTC hour
   * @default "UTC"
   */
  timezone?: string;
  /**
   * Only clicks whose platform is one of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (platform=a&platform=b), at most 20 values of at most 200 characters; Other
   * is refused. Different filter parameters must all match
   */
  platform?: string | string[];
  /**
   * Only clicks whose platform is none of these: Android, iOS or Desktop (android, ios, desktop too; any
   * case). Repeat it for several (notPlatform=a&notPlatform=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notPlatform?: string | string[];
  /**
   * Only clicks whose country is one of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (country=a&country=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  country?: string | string[];
  /**
   * Only clicks whose country is none of these: an ISO country code (any case) or Unknown. Repeat it for
   * several (notCountry=a&notCountry=b), at most 20 values of at most 200 characters; Other is refused.
   * Different filter parameters must all match
   */
  notCountry?: string | string[];
  /**
   * Only clicks whose browser is one of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (browser=a&browser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  browser?: string | string[];
  /**
   * Only clicks whose browser is none of these: a browser name as the browsers breakdown shows it (Chrome,
   * Mobile Safari…). Repeat it for several (notBrowser=a&notBrowser=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notBrowser?: string | string[];
  /**
   * Only clicks whose os is one of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (os=a&os=b), at most 20 values of at most 200 characters; Other is
   * refused. Different filter parameters must all match
   */
  os?: string | string[];
  /**
   * Only clicks whose os is none of these: an operating system name as the os breakdown shows it (Android,
   * iOS, Windows…). Repeat it for several (notOs=a&notOs=b), at most 20 values of at most 200 characters;
   * Other is refused. Different filter parameters must all match
   */
  notOs?: string | string[];
  /**
   * Only clicks whose device is one of these: Mobile or Desktop (any case). Repeat it for several
   * (device=a&device=b), at most 20 values of at most 200 characters; Other is refused. Different filter
   * parameters must all match
   */
  device?: string | string[];
  /**
   * Only clicks whose device is none of these: Mobile or Desktop (any case). Repeat it for several
   * (notDevice=a&notDevice=b), at most 20 values of at most 200 characters; Other is refused. Different
   * filter parameters must all match
   */
  notDevice?: string | string[];
  /**
   * Only clicks whose referrer is one of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (referrer=a&referrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  referrer?: string | string[];
  /**
   * Only clicks whose referrer is none of these: a referring host as the referrers breakdown shows it (any
   * case), or direct. Repeat it for several (notReferrer=a&notReferrer=b), at most 20 values of at most 200
   * characters; Other is refused. Different filter parameters must all match
   */
  notReferrer?: string | string[];
  /**
   * csv (RFC 4180, CRLF, a header row) or json (an array of objects keyed by the same column names)
   * @default "csv"
   */
  format?: 'csv' | 'json';
  /**
   * long: one row per bucket and dimension value (bucket, dimension, value, clicks), then per app event and
   * platform (dimension the event, value the platform, clicks the count). wide: one row per link and bucket
   * (link_id, title, short_url, bucket_start, clicks, unique_clicks, android, ios, desktop, mobile,
   * desktop_device, then the app events per platform (redirect_android, …, app_re_open_other), then
   * country_<value>, browser_<value>, os_<value>, referrer_<value> columns for the top 10 of the whole
   * export, with country_Other, browser_Other, os_Other, referrer_Other holding the rest)
   * @default "long"
   */
  layout?: 'long' | 'wide';
  /** Only the links carrying this tag */
  tag?: string;
}

/** Clicks of one link over a range. */
export interface LinkAnalytics {
  /** Non-bot clicks in the range; under filters, those that match them all */
  totalClicks: number;
  /** Distinct visitors in the range (HyperLogLog estimate, merged over the whole range) */
  uniqueClicks: number;
  /** Visits of link-preview crawlers (Facebook, Slack, WhatsApp…) in the range; never counted as clicks */
  previews: number;
  /**
   * The routing platform: android, ios, desktop. Each value always present, 0 when it had no clicks; clicks
   * in the range, adding up to totalClicks
   */
  platforms: Record<string, number>;
  /**
   * ISO country codes; Unknown where the address has no country. The top 10, the rest added up as Other;
   * clicks in the range, adding up to totalClicks
   */
  countries: Record<string, number>;
  /**
   * Browser names (Chrome, Mobile Safari, Samsung Internet…); Unknown where the agent names none. The top 10,
   * the rest added up as Other; clicks in the range, adding up to totalClicks
   */
  browsers: Record<string, number>;
  /**
   * Operating system names (Windows, Android, iOS, Mac OS…); Unknown where the agent names none. The top 10,
   * the rest added up as Other; clicks in the range, adding up to totalClicks
   */
  os: Record<string, number>;
  /**
   * Mobile (phones, tablets, wearables), Desktop. Each value always present, 0 when it had no clicks; clicks
   * in the range, adding up to totalClicks
   */
  devices: Record<string, number>;
  /**
   * Referring hosts; direct for visits without a referrer. The top 10, the rest added up as Other; clicks in
   * the range, adding up to totalClicks
   */
  referrers: Record<string, number>;
  /** One entry per bucket across the whole range, zero-filled; the clicks add up to totalClicks */
  timeSeries: {
    /** Start of the bucket, a UTC instant (local midnight of the range's timezone for day, week and month) */
    date: string;
    /** Clicks in the bucket */
    clicks: number;
    /**
     * Distinct visitors in the bucket: the bucket's hourly sketches merged (HyperLogLog estimate, at most
     * clicks)
     */
    uniqueClicks: number;
    appEvents: {
      REDIRECT: number;
      APP_INSTALL: number;
      APP_FIRST_OPEN: number;
      APP_RE_OPEN: number;
      /**
       * Distinct visitors, installs or opens behind each event in the bucket, every platform together: the
       * bucket's sketches merged (HyperLogLog estimate, exact up to 160), as uniqueClicks is for the clicks
       */
      uniques: {
        REDIRECT: number;
        APP_INSTALL: number;
        APP_FIRST_OPEN: number;
        APP_RE_OPEN: number;
      };
    };
  }[];
  /** The resolved range: startDate inclusive, endDate exclusive */
  range: {
    startDate: string;
    endDate: string;
    timeBucket: 'hour' | 'day' | 'week' | 'month';
  };
  appEvents: {
    counts: {
      /**
       * Clicks (the platforms breakdown; OTHER is always 0: every click is routed as android, ios or
       * desktop), per platform
       */
      CLICK: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Clicks whose answer sent a visitor without the app on to an app store (Play Store, App Store,
       * market:), per platform
       */
      REDIRECT: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /** Installs reported through the link (no source reports them yet: 0), per platform */
      APP_INSTALL: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * First launches after install that an app reported (POST /api/app/open, firstLaunch true), per
       * platform
       */
      APP_FIRST_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Later launches that an app reported (POST /api/app/open, firstLaunch false or absent), per platform
       */
      APP_RE_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
    };
    /** The funnel click → store redirect → install → first open; re-opens are not part of it */
    conversion: {
      /** REDIRECT / CLICK over all platforms; null when there is nothing to divide by */
      redirectPerClick: number | null;
      /** APP_INSTALL / REDIRECT; null when there is nothing to divide by */
      installPerRedirect: number | null;
      /** APP_FIRST_OPEN / APP_INSTALL; null when there is nothing to divide by */
      firstOpenPerInstall: number | null;
      /**
       * APP_FIRST_OPEN / CLICK: the whole funnel, installs reported or not; null when there is nothing to
       * divide by
       */
      firstOpenPerClick: number | null;
    };
    /**
     * Distinct visitors, installs or opens behind each event (HyperLogLog estimates, merged over the whole
     * range and, in the summary, over the links: one install counts once however often it opens)
     */
    uniques: {
      /**
       * Distinct visitors sent on to an app store (a visitor as in uniqueClicks: address + User-Agent), per
       * platform
       */
      REDIRECT: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /** Distinct installs matched to the link (an install is the app and its installId), per platform */
      APP_INSTALL: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Distinct installs that reported a first launch, or distinct opens for apps that name no installId,
       * per platform
       */
      APP_FIRST_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Distinct installs that reported later launches (the installId sent with each open), or distinct opens
       * (openId) for opens that name none, per platform
       */
      APP_RE_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
    };
  };
  /**
   * true when the app events (appEvents and each bucket's) count only what the filters select: without
   * filters, or with filters on the platform alone (app events carry a platform and nothing else). false when
   * a filter names another dimension: the app events are then those of every click, unfiltered
   */
  appEventsFiltered: boolean;
}

/** Totals over the whole account. */
export interface SummaryAnalytics {
  totalLinks: number;
  /** Clicks on those links (all time or in the range); under filters, those that match them all */
  totalClicks: number;
  /** Links without an expiry, or whose expiry is in the future */
  activeLinks: number;
  /** The 5 most-clicked links */
  topLinks: {
    id: string;
    title: string;
    clicks: number;
  }[];
  /**
   * The routing platform: android, ios, desktop. Each value always present, 0 when it had no clicks; clicks
   * over the same links and clicks as totalClicks; only with breakdowns=true, adding up to totalClicks
   */
  platforms?: Record<string, number>;
  /**
   * ISO country codes; Unknown where the address has no country. The top 10, the rest added up as Other;
   * clicks over the same links and clicks as totalClicks; only with breakdowns=true, adding up to totalClicks
   */
  countries?: Record<string, number>;
  /**
   * Browser names (Chrome, Mobile Safari, Samsung Internet…); Unknown where the agent names none. The top 10,
   * the rest added up as Other; clicks over the same links and clicks as totalClicks; only with
   * breakdowns=true, adding up to totalClicks
   */
  browsers?: Record<string, number>;
  /**
   * Operating system names (Windows, Android, iOS, Mac OS…); Unknown where the agent names none. The top 10,
   * the rest added up as Other; clicks over the same links and clicks as totalClicks; only with
   * breakdowns=true, adding up to totalClicks
   */
  os?: Record<string, number>;
  /**
   * Mobile (phones, tablets, wearables), Desktop. Each value always present, 0 when it had no clicks; clicks
   * over the same links and clicks as totalClicks; only with breakdowns=true, adding up to totalClicks
   */
  devices?: Record<string, number>;
  /**
   * Referring hosts; direct for visits without a referrer. The top 10, the rest added up as Other; clicks
   * over the same links and clicks as totalClicks; only with breakdowns=true, adding up to totalClicks
   */
  referrers?: Record<string, number>;
  /** The app funnel of the same links and range; only with breakdowns=true */
  appEvents?: {
    counts: {
      /**
       * Clicks (the platforms breakdown; OTHER is always 0: every click is routed as android, ios or
       * desktop), per platform
       */
      CLICK: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Clicks whose answer sent a visitor without the app on to an app store (Play Store, App Store,
       * market:), per platform
       */
      REDIRECT: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /** Installs reported through the link (no source reports them yet: 0), per platform */
      APP_INSTALL: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * First launches after install that an app reported (POST /api/app/open, firstLaunch true), per
       * platform
       */
      APP_FIRST_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Later launches that an app reported (POST /api/app/open, firstLaunch false or absent), per platform
       */
      APP_RE_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
    };
    /** The funnel click → store redirect → install → first open; re-opens are not part of it */
    conversion: {
      /** REDIRECT / CLICK over all platforms; null when there is nothing to divide by */
      redirectPerClick: number | null;
      /** APP_INSTALL / REDIRECT; null when there is nothing to divide by */
      installPerRedirect: number | null;
      /** APP_FIRST_OPEN / APP_INSTALL; null when there is nothing to divide by */
      firstOpenPerInstall: number | null;
      /**
       * APP_FIRST_OPEN / CLICK: the whole funnel, installs reported or not; null when there is nothing to
       * divide by
       */
      firstOpenPerClick: number | null;
    };
    /**
     * Distinct visitors, installs or opens behind each event (HyperLogLog estimates, merged over the whole
     * range and, in the summary, over the links: one install counts once however often it opens)
     */
    uniques: {
      /**
       * Distinct visitors sent on to an app store (a visitor as in uniqueClicks: address + User-Agent), per
       * platform
       */
      REDIRECT: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /** Distinct installs matched to the link (an install is the app and its installId), per platform */
      APP_INSTALL: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Distinct installs that reported a first launch, or distinct opens for apps that name no installId,
       * per platform
       */
      APP_FIRST_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
      /**
       * Distinct installs that reported later launches (the installId sent with each open), or distinct opens
       * (openId) for opens that name none, per platform
       */
      APP_RE_OPEN: {
        ANDROID: number;
        IOS: number;
        DESKTOP: number;
        OTHER: number;
      };
    };
  };
  /**
   * true when the app events (appEvents and each bucket's) count only what the filters select: without
   * filters, or with filters on the platform alone (app events carry a platform and nothing else). false when
   * a filter names another dimension: the app events are then those of every click, unfiltered
   */
  appEventsFiltered: boolean;
}

/** One row of a long export. */
export interface AnalyticsExportRow {
  bucket: string;
  /**
   * total, platform, country, browser, os, device, referrer, or an app event (REDIRECT, APP_INSTALL,
   * APP_FIRST_OPEN, APP_RE_OPEN)
   */
  dimension: string;
  /** The dimension's value; for an app event, its platform (ANDROID, IOS, DESKTOP, OTHER) */
  value: string;
  /** Clicks; for an app event, how many of those events */
  clicks: number;
}

/** One row of the account-wide long export: a per-link row led by its link's id. */
export interface AccountExportRow {
  link_id: string;
  bucket: string;
  /**
   * total, platform, country, browser, os, device, referrer, or an app event (REDIRECT, APP_INSTALL,
   * APP_FIRST_OPEN, APP_RE_OPEN)
   */
  dimension: string;
  /** The dimension's value; for an app event, its platform (ANDROID, IOS, DESKTOP, OTHER) */
  value: string;
  /** Clicks; for an app event, how many of those events */
  clicks: number;
}

/** Image formats of a link's QR code. */
export type QrFormat = 'svg' | 'png';

/** Query of GET /links/:id/qr. */
export interface LinkQrQuery {
  /**
   * svg (scalable, for screens and print) or png
   * @default "svg"
   */
  format?: 'svg' | 'png';
  /**
   * Width and height in pixels, 64-2048
   * @default 512
   */
  size?: number;
  /**
   * Quiet zone around the code, in modules, 0-16
   * @default 4
   */
  margin?: number;
  /** The modules' colour: darker than the background, with a contrast of at least 3:1 */
  color?: string;
  /** The background's colour (quiet zone included) */
  background?: string;
}

/** Query of GET /links/slug-availability. */
export interface SlugAvailabilityQuery {
  /** The back-half to check: 3-64 letters, digits, "-" or "_" */
  slug: string;
  /** One of your active custom domains; the default domain when omitted */
  domain?: string;
}

/** Whether a slug is free on a domain, and the short URL a link there has. */
export interface SlugAvailability {
  slug: string;
  /** The custom domain asked about; absent for the default domain */
  domain?: string;
  /** true: no link has this slug on this domain now (a link made meanwhile can still take it) */
  available: boolean;
  /** The short URL a link with this slug on this domain has */
  url: string;
}

/** Body of POST /links/:id/qr: the same options, and a logo (a PNG in base64). */
export interface LinkQrRender {
  /**
   * svg (scalable, for screens and print) or png
   * @default "svg"
   */
  format?: 'svg' | 'png';
  /**
   * Width and height in pixels, 64-2048
   * @default 512
   */
  size?: number;
  /**
   * Quiet zone around the code, in modules, 0-16
   * @default 4
   */
  margin?: number;
  /** The modules' colour: darker than the background, with a contrast of at least 3:1 */
  color?: string;
  /** The background's colour (quiet zone included) */
  background?: string;
  /**
   * A PNG image (base64, at most 256 KiB, at most 1024 × 1024 px) drawn in the centre over a fifth of the
   * code's width, on the background colour. With a logo the code uses error correction H (30 %), so it still
   * reads with the centre covered
   */
  logo?: string;
  /**
   * Where to fetch the logo instead (your app's icon, say): a PNG on the public internet, with the same
   * limits as `logo`. Fetched by the server (at most 5 s, 3 redirects) and kept for 10 minutes; addresses on
   * private networks are refused
   */
  logoUrl?: string;
}

/** An app of the account: an iOS app or an Android app, with its app key's prefix. */
export interface App {
  id: string;
  platform: 'ios' | 'android';
  name?: string;
  teamId?: string;
  bundleId?: string;
  appStoreId?: string;
  packageName?: string;
  sha256CertFingerprints?: string[];
  /**
   * The first characters of the app's key, to tell keys apart; null while the app has none (apps registered
   * before keys existed)
   */
  keyPrefix: string | null;
  /** When the current key was created (or last rotated); null without a key */
  keyCreatedAt: string | null;
  /** Whether the probabilistic install match is on for this app */
  fingerprintMatching: boolean;
  /** The probabilistic match window, in minutes */
  fingerprintWindowMinutes: number;
  createdAt: string;
}

/** An app with its app key in full: only when the app is registered and when its key is rotated. */
export interface AppWithKey {
  id: string;
  platform: 'ios' | 'android';
  name?: string;
  teamId?: string;
  bundleId?: string;
  appStoreId?: string;
  packageName?: string;
  sha256CertFingerprints?: string[];
  /**
   * The first characters of the app's key, to tell keys apart; null while the app has none (apps registered
   * before keys existed)
   */
  keyPrefix: string | null;
  /** When the current key was created (or last rotated); null without a key */
  keyCreatedAt: string | null;
  /** Whether the probabilistic install match is on for this app */
  fingerprintMatching: boolean;
  /** The probabilistic match window, in minutes */
  fingerprintWindowMinutes: number;
  createdAt: string;
  /** The app key, publishable (safe to ship inside the app); returned only in this response */
  key: string;
}

/** Body of POST /apps: an iOS or an Android app, told apart by `platform`. */
export type CreateAppBody = {
  platform: 'ios';
  /** Shown on the iOS page ("Open in …") */
  name?: string;
  teamId: string;
  bundleId: string;
  /** Visitors without the app go to its App Store page when a link has no iOS fallback */
  appStoreId?: string;
  /**
   * Whether a first launch without an install token may be matched by device facts on the same network
   * (probabilistic); off by default
   */
  fingerprintMatching?: boolean;
  /** How long after a store visit its install may still be matched by fingerprint; 120 by default */
  fingerprintWindowMinutes?: number;
} | {
  platform: 'android';
  /** Shown on the iOS page ("Open in …") */
  name?: string;
  packageName: string;
  /** SHA-256 fingerprints of the app's signing certificates (keytool -list -v) */
  sha256CertFingerprints: string[];
  /**
   * Whether a first launch without an install token may be matched by device facts on the same network
   * (probabilistic); off by default
   */
  fingerprintMatching?: boolean;
  /** How long after a store visit its install may still be matched by fingerprint; 120 by default */
  fingerprintWindowMinutes?: number;
};

/** Body of PATCH /apps/:id: the app's settings that may change. */
export interface UpdateAppBody {
  /**
   * Whether a first launch without an install token may be matched by device facts on the same network
   * (probabilistic); off by default
   */
  fingerprintMatching?: boolean;
  /** How long after a store visit its install may still be matched by fingerprint; 120 by default */
  fingerprintWindowMinutes?: number;
}

/** A custom short-link domain. */
export interface Domain {
  id: string;
  hostname: string;
  /** active once the TXT record held the token */
  status: 'pending' | 'active';
  /** The DNS record to publish; the domain becomes active once it is found */
  verification: {
    type: 'TXT';
    name: string;
    value: string;
  };
  notFoundUrl?: string;
  /** Where long links on this domain may send visitors (URLs with * wildcards); empty: no long links */
  allowedUrlPatterns: string[];
  verifiedAt?: string;
  createdAt: string;
  /**
   * When DNS last answered a check of the TXT record while the domain was active (its verification, later
   * verify calls and the scheduled re-check)
   */
  lastCheckedAt?: string;
  /**
   * Since when the TXT record has lacked the token: the domain turns pending once this is
   * DOMAIN_VERIFICATION_GRACE_HOURS old; kept after that, cleared when it is verified again
   */
  verificationLostAt?: string;
}

/** Body of POST /domains. */
export interface CreateDomainBody {
  hostname: string;
  /** Where unknown codes on this domain go (a 302 instead of the 404 page) */
  notFoundUrl?: string;
  /**
   * Where long links (/?link=…) on this domain may send visitors: URLs with * wildcards; a long link any of
   * whose destinations matches none is a 404. Empty: no long links
   */
  allowedUrlPatterns?: string[];
}

/** Body of PUT /domains/:id. */
export interface UpdateDomainBody {
  /** null: the 404 page again */
  notFoundUrl?: string | null;
  allowedUrlPatterns?: string[] | null;
}

/** Body of POST /imports: the format of the file, its domain and options. */
export interface CreateImportBody {
  format: 'takeout' | 'generic' | 'bitly' | 'shlink' | 'kutt' | 'yourls';
  /** One of your active custom domains the links go on; the default domain when omitted */
  domain?: string;
  /**
   * Check every row and report, writing no link
   * @default false
   */
  dryRun?: boolean;
  mapping?: {
    code?: string;
    defaultUrl?: string;
    title?: string;
    tags?: string;
    desktopUrl?: string;
    androidUrl?: string;
    androidPackageName?: string;
    androidMinimumVersion?: string;
    androidFallbackUrl?: string;
    iosUrl?: string;
    iosBundleId?: string;
    iosMinimumVersion?: string;
    iosFallbackUrl?: string;
    expirationDate?: string;
    expiredUrl?: string;
    socialTitle?: string;
    socialDescription?: string;
    socialImageUrl?: string;
    createdAt?: string;
  };
}

/** An import of links: its status, progress and the count of each outcome. */
export interface Import {
  id: string;
  format: 'takeout' | 'generic' | 'bitly' | 'shlink' | 'kutt' | 'yourls';
  /** The custom domain the links go on; absent for the default domain */
  domain?: string;
  dryRun: boolean;
  /** waiting for its file, running, done, or failed (see error); rows written before a failure stay */
  status: 'waiting' | 'running' | 'done' | 'failed';
  error?: {
    message: string;
  };
  /** Bytes of the file read so far */
  bytesRead: number;
  /** The file's size, when its upload said it (Content-Length) */
  totalBytes?: number;
  /** Rows read so far, each counted below once done */
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  createdAt: string;
  finishedAt?: string;
}

/** One page of the report of an import, by line. */
export interface ImportRowPage {
  rows: {
    /** The row's line in the file (the header is line 1) */
    line: number;
    /** The short code the row asks for, when it has one */
    code?: string;
    /** In a dry run: what a real run would do */
    outcome: 'created' | 'updated' | 'unchanged' | 'refused';
    linkId?: string;
    /** Why the row was refused */
    errors?: {
      /** The link field, FDL parameter or column concerned */
      field: string;
      message: string;
    }[];
    /** What of the row the link does not do as its source did */
    warnings?: {
      /** The link field, FDL parameter or column concerned */
      field: string;
      message: string;
    }[];
  }[];
  pagination: Pagination;
}

/** Query of GET /imports/:id/rows. */
export interface ListImportRowsQuery {
  /** Only the rows of this outcome (refused: the rows to fix) */
  outcome?: 'created' | 'updated' | 'unchanged' | 'refused';
  /**
   * Page number, from 1
   * @default 1
   */
  page?: number;
  /**
   * Rows per page, 1-500
   * @default 100
   */
  limit?: number;
}

/** What a webhook endpoint can subscribe to. */
export type WebhookEventType = 'link.created' | 'link.updated' | 'link.deleted' | 'click';

/** A webhook endpoint of the account: never its secret. */
export interface Webhook {
  id: string;
  url: string;
  events: ('link.created' | 'link.updated' | 'link.deleted' | 'click')[];
  enabled: boolean;
  description?: string;
  /** After a rotation: until when the replaced secret still signs deliveries beside the new one */
  previousSecretExpiresAt?: string;
  createdAt: string;
  updatedAt: string;
}

/** A webhook endpoint with its signing secret: only when it is created and when its secret is rotated. */
export interface WebhookWithSecret {
  id: string;
  url: string;
  events: ('link.created' | 'link.updated' | 'link.deleted' | 'click')[];
  enabled: boolean;
  description?: string;
  /** After a rotation: until when the replaced secret still signs deliveries beside the new one */
  previousSecretExpiresAt?: string;
  createdAt: string;
  updatedAt: string;
  /**
   * The signing secret (whsec_…): returned when the endpoint is created and when its secret is rotated, never
   * again
   */
  secret: string;
}

/** Body of POST /webhooks. */
export interface CreateWebhookBody {
  url: string;
  /** The events the endpoint receives: link.created, link.updated, link.deleted, click */
  events: ('link.created' | 'link.updated' | 'link.deleted' | 'click')[];
  /**
   * Whether events are sent to it; true by default
   * @default true
   */
  enabled?: boolean;
  description?: string;
}

/** Body of PATCH /webhooks/:id: the fields sent change; null removes the description. */
export interface UpdateWebhookBody {
  url?: string;
  /** The events the endpoint receives: link.created, link.updated, link.deleted, click */
  events?: ('link.created' | 'link.updated' | 'link.deleted' | 'click')[];
  enabled?: boolean;
  description?: string | null;
}

/** One delivery of an event to an endpoint, as the endpoint's log shows it. */
export interface WebhookDelivery {
  id: string;
  event: 'link.created' | 'link.updated' | 'link.deleted' | 'click';
  /** pending: queued or waiting for a retry; succeeded: a 2xx answer; failed: out of attempts (or refused) */
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  /** The last attempt's HTTP status; null without an answer */
  responseStatus: number | null;
  /** The first bytes of the last answer (at most 512) */
  responseBody: string | null;
  /** Why the last attempt got no answer (timeout, refused address…) */
  error: string | null;
  /** How long the last attempt took */
  durationMs: number | null;
  createdAt: string;
  lastAttemptAt: string | null;
}

/** One page of an endpoint's delivery log, newest first. */
export interface WebhookDeliveryPage {
  deliveries: WebhookDelivery[];
  pagination: Pagination;
}

/** Query of GET /webhooks/:id/deliveries. */
export interface ListWebhookDeliveriesQuery {
  /**
   * Page number, from 1; newest deliveries first
   * @default 1
   */
  page?: number;
  /**
   * Items per page, 1-100
   * @default 20
   */
  limit?: number;
}

/** The body of a webhook delivery, told apart by `type` (verify its signature first: docs/webhooks.md). */
export type WebhookEvent = {
  /** The event id: the same on every attempt and resend, so a receiver can drop repeats */
  id: string;
  type: 'link.created';
  createdAt: string;
  data: {
    link: Link;
  };
} | {
  /** The event id: the same on every attempt and resend, so a receiver can drop repeats */
  id: string;
  type: 'link.updated';
  createdAt: string;
  data: {
    link: Link;
  };
} | {
  /** The event id: the same on every attempt and resend, so a receiver can drop repeats */
  id: string;
  type: 'link.deleted';
  createdAt: string;
  data: {
    link: {
      id: string;
    };
  };
} | {
  /** The event id: the same on every attempt and resend, so a receiver can drop repeats */
  id: string;
  type: 'click';
  createdAt: string;
  data: {
    /** When the clicks were counted */
    committedAt: string;
    totalClicks: number;
    /** Clicks per link id */
    links: Record<string, number>;
    /** The newest clicks first: at most 100, and at most 20 of each link */
    recent: {
      /** When the click happened (ISO 8601) */
      at: string;
      /** The link clicked */
      linkId: string;
      /** The routing platform as stored: android, ios or desktop */
      platform: string;
      /** ISO country code, or Unknown */
      country: string;
      /** Browser name, or Unknown */
      browser: string;
      /** Operating system name, or Unknown */
      os: string;
      /** Referring host, or direct */
      referrer: string;
    }[];
  };
};

/** Error codes the API answers with. */
export type ErrorCode = 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'INVALID_REQUEST' | 'RATE_LIMITED' | 'INTERNAL_ERROR';

/** One problem with one field of a request. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/** The body of every failure. */
export interface ErrorEnvelope {
  success: false;
  error: {
    code: 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'INVALID_REQUEST' | 'RATE_LIMITED' | 'INTERNAL_ERROR';
    message: string;
    details: {
      field: string;
      message: string;
    }[];
  };
}
