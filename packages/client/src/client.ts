import { createTransport, type RequestOptions } from './http.js';
import type {
  AccountExportQuery,
  AccountExportRow,
  AnalyticsExportQuery,
  AnalyticsExportRow,
  ApiKey,
  ApiKeyListItem,
  AuthResult,
  ChangePasswordInput,
  CreateApiKeyInput,
  CreateLinkInput,
  ExportLayout,
  Link,
  LinkAnalytics,
  LinkAnalyticsQuery,
  LinkListItem,
  LinkPage,
  ListLinksQuery,
  LoginInput,
  QrQuery,
  QrRenderOptions,
  SlugAvailability,
  RegisterInput,
  SummaryAnalyticsQuery,
  WideExportRow,
  SummaryAnalytics,
  TagCount,
  UpdateLinkInput,
  User,
  App,
  AppWithKey,
  CreateAppInput,
  UpdateAppInput,
  CreateDomainInput,
  Domain,
  UpdateDomainInput,
  CreateWebhookInput,
  ListWebhookDeliveriesQuery,
  UpdateWebhookInput,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookWithSecret,
  CreateImportInput,
  Import,
  ImportRowPage,
  ListImportRowsQuery,
} from './types.js';

/** Options of createClient. Send either an API key or a login token; both travel as `Authorization: Bearer`. */
export type ClientOptions = {
  /** The API's address including its `/api` prefix, e.g. `http://127.0.0.1:3000/api`. */
  baseUrl: string;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof fetch;
  /** Per-attempt timeout in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Extra attempts for GET, PUT and DELETE after 429, 502-504 or a network failure (default 2). POST is never retried. */
  retries?: number;
} & ({ apiKey?: string; token?: never } | { token?: string; apiKey?: never });

/** The client createClient returns. */
export type DeeplinkClient = ReturnType<typeof createClient>;

const path = (strings: TemplateStringsArray, ...ids: string[]) =>
  strings.reduce((out, part, i) => out + part + (i < ids.length ? encodeURIComponent(ids[i]!) : ''), '');

/**
 * Creates a typed client for the API. Methods resolve to the response's `data`, unwrapped, and
 * reject with a ServiceError subclass. `auth.register()` and `auth.login()` remember the returned
 * token and send it on later calls, in place of any apiKey or token given here.
 */
export function createClient(options: ClientOptions) {
  let credential = options.apiKey ?? options.token;
  const send = createTransport({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs ?? 30_000,
    retries: options.retries ?? 2,
    credential: () => credential,
  });

  const remember = (result: AuthResult): AuthResult => {
    credential = result.token;
    return result;
  };

  type Json<Q extends { layout?: ExportLayout }> = Q & { format: 'json' };
  function exportAnalytics(query: Json<AccountExportQuery & { layout: 'wide' }>, opts?: RequestOptions): Promise<WideExportRow[]>;
  function exportAnalytics(query: Json<AccountExportQuery & { layout?: 'long' }>, opts?: RequestOptions): Promise<AccountExportRow[]>;
  function exportAnalytics(query?: AccountExportQuery & { format?: 'csv' }, opts?: RequestOptions): Promise<string>;
  function exportAnalytics(
    id: string,
    query: Json<AnalyticsExportQuery & { layout: 'wide' }>,
    opts?: RequestOptions,
  ): Promise<WideExportRow[]>;
  function exportAnalytics(
    id: string,
    query: Json<AnalyticsExportQuery & { layout?: 'long' }>,
    opts?: RequestOptions,
  ): Promise<AnalyticsExportRow[]>;
  function exportAnalytics(id: string, query?: AnalyticsExportQuery & { format?: 'csv' }, opts?: RequestOptions): Promise<string>;
  function exportAnalytics(
    idOrQuery: string | AccountExportQuery = {},
    queryOrOpts?: AnalyticsExportQuery | RequestOptions,
    opts?: RequestOptions,
  ): Promise<string | AnalyticsExportRow[] | AccountExportRow[] | WideExportRow[]> {
    const [where, query, options] =
      typeof idOrQuery === 'string'
        ? [path`/analytics/links/${idOrQuery}/export`, (queryOrOpts ?? {}) as AnalyticsExportQuery, opts]
        : ['/analytics/export', idOrQuery, queryOrOpts as RequestOptions | undefined];
    // The export is a file download, not wrapped in the envelope.
    return send({ method: 'GET', path: where, query: { ...query }, as: query.format === 'json' ? 'json' : 'text' }, options);
  }

  function qr(id: string, query: QrQuery & { format: 'png' }, opts?: RequestOptions): Promise<Blob>;
  function qr(id: string, query?: QrQuery & { format?: 'svg' }, opts?: RequestOptions): Promise<string>;
  function qr(id: string, query: QrQuery = {}, opts?: RequestOptions): Promise<string | Blob> {
    const request = { method: 'GET', path: path`/links/${id}/qr`, query: { ...query } } as const;
    return send({ ...request, as: query.format === 'png' ? 'blob' : 'text' }, opts);
  }

  function qrWithLogo(id: string, options: QrRenderOptions & { format: 'png' }, opts?: RequestOptions): Promise<Blob>;
  function qrWithLogo(id: string, options: QrRenderOptions & { format?: 'svg' }, opts?: RequestOptions): Promise<string>;
  function qrWithLogo(id: string, options: QrRenderOptions, opts?: RequestOptions): Promise<string | Blob> {
    const request = { method: 'POST', path: path`/links/${id}/qr`, body: options } as const;
    return send({ ...request, as: options.format === 'png' ? 'blob' : 'text' }, opts);
  }

  const links = {
    /** Creates a link; `slug` picks its short code. */
    create: (input: CreateLinkInput, opts?: RequestOptions) =>
      send<{ link: Link }>({ method: 'POST', path: '/links', body: input }, opts).then((data) => data.link),
    /**
     * Creates up to 100 links in one transaction; resolves to them in the order given. One invalid
     * link: ServiceValidationError naming `links.N.field`, and none is created (a taken slug: ConflictError).
     */
    createMany: (inputs: readonly CreateLinkInput[], opts?: RequestOptions) =>
      send<{ links: Link[] }>({ method: 'POST', path: '/links/bulk', body: { links: inputs } }, opts).then((data) => data.links),
    /** Reads one link. */
    get: (id: string, opts?: RequestOptions) =>
      send<{ link: Link }>({ method: 'GET', path: path`/links/${id}` }, opts).then((data) => data.link),
    /** Merges `changes` into the link (null clears a field); resolves to the whole updated link. */
    update: (id: string, changes: UpdateLinkInput, opts?: RequestOptions) =>
      send<{ link: Link }>({ method: 'PUT', path: path`/links/${id}`, body: changes }, opts).then((data) => data.link),
    /** Deletes a link and its analytics, permanently. */
    delete: (id: string, opts?: RequestOptions) => send<null>({ method: 'DELETE', path: path`/links/${id}` }, opts).then(() => {}),
    /** Whether `slug` is free on the default domain or on `domain` (one of yours), and the short URL it would be. */
    slugAvailability: (slug: string, domain?: string, opts?: RequestOptions) =>
      send<SlugAvailability>({ method: 'GET', path: '/links/slug-availability', query: { slug, domain } }, opts),
    /** The link's short URL as a QR code: SVG text (default), or a PNG Blob with `format: 'png'`. */
    qr,
    /** The same with `logo` (a PNG in base64) drawn over the code's centre, which then uses error correction H. */
    qrWithLogo,
    /** One page of the caller's links, filtered by `tag` (all must match) and `q`, with the extras in `include`. */
    list: (query: ListLinksQuery = {}, opts?: RequestOptions) =>
      send<LinkPage>(
        { method: 'GET', path: '/links', query: { ...query, include: [query.include ?? []].flat().join(',') || undefined } },
        opts,
      ),
    /**
     * Deletes the caller's links among `ids` (up to 100) in one transaction; resolves to how many
     * were deleted (ids already gone are skipped). One id of another account: ServiceAuthError 403, nothing deleted.
     */
    bulkDelete: (ids: readonly string[], opts?: RequestOptions) =>
      send<{ deleted: number }>({ method: 'POST', path: '/links/bulk-delete', body: { ids } }, opts).then((data) => data.deleted),
    /**
     * Every link from `query.page` (default 1) to the last page, fetched one page at a time as the
     * loop asks for more. Links created or deleted meanwhile can shift items between pages.
     */
    async *iterate(query: ListLinksQuery = {}, opts?: RequestOptions): AsyncGenerator<LinkListItem, void, undefined> {
      for (let page = query.page ?? 1; ; page++) {
        const { links: items, pagination } = await links.list({ ...query, page }, opts);
        yield* items;
        if (items.length === 0 || page >= pagination.pages) return;
      }
    },
  };

  return {
    auth: {
      /** Creates an account; remembers the returned token. */
      register: (input: RegisterInput, opts?: RequestOptions) =>
        send<AuthResult>({ method: 'POST', path: '/auth/register', body: input }, opts).then(remember),
      /** Logs in; remembers the returned token. */
      login: (input: LoginInput, opts?: RequestOptions) =>
        send<AuthResult>({ method: 'POST', path: '/auth/login', body: input }, opts).then(remember),
      /** The authenticated user. */
      me: (opts?: RequestOptions) => send<{ user: User }>({ method: 'GET', path: '/auth/me' }, opts).then((data) => data.user),
      /** Changes the password (needs a login token): every earlier token ends; remembers the new one. */
      changePassword: (input: ChangePasswordInput, opts?: RequestOptions) =>
        send<AuthResult>({ method: 'POST', path: '/auth/password', body: input }, opts).then(remember),
      /** Ends every login token of the account, this client's included (needs a login token; API keys stay valid). */
      logoutAll: (opts?: RequestOptions) => send<null>({ method: 'POST', path: '/auth/logout-all' }, opts).then(() => {}),
    },
    apiKeys: {
      /** Creates an API key (needs a login token, not a key); `key` is shown only here. */
      create: (input: CreateApiKeyInput, opts?: RequestOptions) =>
        send<{ apiKey: ApiKey }>({ method: 'POST', path: '/auth/api-keys', body: input }, opts).then((data) => data.apiKey),
      /** The caller's keys, newest first, with prefix and last use; never the secrets. */
      list: (opts?: RequestOptions) =>
        send<{ apiKeys: ApiKeyListItem[] }>({ method: 'GET', path: '/auth/api-keys' }, opts).then((data) => data.apiKeys),
      /** Revokes an API key, effective immediately. */
      delete: (id: string, opts?: RequestOptions) =>
        send<null>({ method: 'DELETE', path: path`/auth/api-keys/${id}` }, opts).then(() => {}),
    },
    links,
    apps: {
      /**
       * Registers an iOS or Android app: served in the association files of the account's domains.
       * Its publishable app key, `key`, is shown only here (and by rotateKey).
       */
      create: (input: CreateAppInput, opts?: RequestOptions) =>
        send<{ app: AppWithKey }>({ method: 'POST', path: '/apps', body: input }, opts).then((data) => data.app),
      /** The account's apps, oldest first, each with its key's prefix (`keyPrefix`), never the key. */
      list: (opts?: RequestOptions) => send<{ apps: App[] }>({ method: 'GET', path: '/apps' }, opts).then((data) => data.apps),
      /** Replaces the app's key: the new one is returned this once, the old one stops working at once. */
      rotateKey: (id: string, opts?: RequestOptions) =>
        send<{ app: AppWithKey }>({ method: 'POST', path: path`/apps/${id}/key` }, opts).then((data) => data.app),
      /** Changes the app's settings: the probabilistic install match (`fingerprintMatching`, `fingerprintWindowMinutes`). */
      update: (id: string, changes: UpdateAppInput, opts?: RequestOptions) =>
        send<{ app: App }>({ method: 'PATCH', path: path`/apps/${id}`, body: changes }, opts).then((data) => data.app),
      delete: (id: string, opts?: RequestOptions) => send<null>({ method: 'DELETE', path: path`/apps/${id}` }, opts).then(() => {}),
    },

    domains: {
      /** Adds a pending domain; publish its `verification` TXT record, then call verify(). */
      create: (input: CreateDomainInput, opts?: RequestOptions) =>
        send<{ domain: Domain }>({ method: 'POST', path: '/domains', body: input }, opts).then((data) => data.domain),
      list: (opts?: RequestOptions) => send<{ domains: Domain[] }>({ method: 'GET', path: '/domains' }, opts).then((data) => data.domains),
      get: (id: string, opts?: RequestOptions) =>
        send<{ domain: Domain }>({ method: 'GET', path: path`/domains/${id}` }, opts).then((data) => data.domain),
      /** Looks the TXT record up now: the domain comes back active when it holds the token, else still pending. */
      verify: (id: string, opts?: RequestOptions) =>
        send<{ domain: Domain }>({ method: 'POST', path: path`/domains/${id}/verify` }, opts).then((data) => data.domain),
      update: (id: string, changes: UpdateDomainInput, opts?: RequestOptions) =>
        send<{ domain: Domain }>({ method: 'PUT', path: path`/domains/${id}`, body: changes }, opts).then((data) => data.domain),
      /** Removes a domain; refused (ConflictError) while links use it. */
      delete: (id: string, opts?: RequestOptions) => send<null>({ method: 'DELETE', path: path`/domains/${id}` }, opts).then(() => {}),
    },

    webhooks: {
      /** Adds a webhook endpoint (at most 10 per account); its signing secret, `secret`, is shown only here (and by rotateSecret). */
      create: (input: CreateWebhookInput, opts?: RequestOptions) =>
        send<{ webhook: WebhookWithSecret }>({ method: 'POST', path: '/webhooks', body: input }, opts).then((data) => data.webhook),
      list: (opts?: RequestOptions) =>
        send<{ webhooks: Webhook[] }>({ method: 'GET', path: '/webhooks' }, opts).then((data) => data.webhooks),
      get: (id: string, opts?: RequestOptions) =>
        send<{ webhook: Webhook }>({ method: 'GET', path: path`/webhooks/${id}` }, opts).then((data) => data.webhook),
      update: (id: string, changes: UpdateWebhookInput, opts?: RequestOptions) =>
        send<{ webhook: Webhook }>({ method: 'PATCH', path: path`/webhooks/${id}`, body: changes }, opts).then((data) => data.webhook),
      delete: (id: string, opts?: RequestOptions) => send<null>({ method: 'DELETE', path: path`/webhooks/${id}` }, opts).then(() => {}),
      /** A new signing secret, returned this once; the old one keeps signing beside it for 24 hours. */
      rotateSecret: (id: string, opts?: RequestOptions) =>
        send<{ webhook: WebhookWithSecret }>({ method: 'POST', path: path`/webhooks/${id}/rotate-secret` }, opts).then(
          (data) => data.webhook,
        ),
      /** A page of the endpoint's delivery log, newest first. */
      deliveries: (id: string, query: ListWebhookDeliveriesQuery = {}, opts?: RequestOptions) =>
        send<WebhookDeliveryPage>({ method: 'GET', path: path`/webhooks/${id}/deliveries`, query: { ...query } }, opts),
      /** Sends a delivery's event again, as a new delivery with attempts of its own. */
      resend: (id: string, deliveryId: string, opts?: RequestOptions) =>
        send<{ delivery: WebhookDelivery }>({ method: 'POST', path: path`/webhooks/${id}/deliveries/${deliveryId}/resend` }, opts).then(
          (data) => data.delivery,
        ),
    },

    imports: {
      /** Creates an import of links (docs/import.md), waiting for its file: the format, the domain, a dry run, a generic mapping. */
      create: (input: CreateImportInput, opts?: RequestOptions) =>
        send<{ import: Import }>({ method: 'POST', path: '/imports', body: input }, opts).then((data) => data.import),
      /**
       * Sends the CSV file of the import and resolves, once every row is done, to the finished import.
       * `imports.get()` meanwhile shows its progress. Give a long file a longer `timeoutMs`.
       */
      upload: (id: string, file: Blob | string, opts?: RequestOptions) =>
        send<{ import: Import }>({ method: 'PUT', path: path`/imports/${id}/file`, file: { content: file, type: 'text/csv' } }, opts).then(
          (data) => data.import,
        ),
      /** An import: its status, the bytes of its file read so far, its rows done and the count of each outcome. */
      get: (id: string, opts?: RequestOptions) =>
        send<{ import: Import }>({ method: 'GET', path: path`/imports/${id}` }, opts).then((data) => data.import),
      /** A page of the report of the import, by line, only the rows of `outcome` when given (the refused ones, say). */
      rows: (id: string, query: ListImportRowsQuery = {}, opts?: RequestOptions) =>
        send<ImportRowPage>({ method: 'GET', path: path`/imports/${id}/rows`, query: { ...query } }, opts),
    },
    tags: {
      /** Every tag on the caller's links with how many links carry it, by name. */
      list: (opts?: RequestOptions) => send<{ tags: TagCount[] }>({ method: 'GET', path: '/tags' }, opts).then((data) => data.tags),
    },
    analytics: {
      /** Clicks of one link over a range (default: the last 30 days, by day). */
      link: (id: string, query: LinkAnalyticsQuery = {}, opts?: RequestOptions) =>
        send<{ analytics: LinkAnalytics }>({ method: 'GET', path: path`/analytics/links/${id}`, query: { ...query } }, opts).then(
          (data) => data.analytics,
        ),
      /** Totals over the whole account, or over the links of `query.tag`; all time unless a range is given. */
      summary: (query: SummaryAnalyticsQuery = {}, opts?: RequestOptions) =>
        send<{ summary: SummaryAnalytics }>({ method: 'GET', path: '/analytics/summary', query: { ...query } }, opts).then(
          (data) => data.summary,
        ),
      /**
       * A download of clicks per bucket: `export(id, query)` for one link, `export(query)` for every
       * link of the account (or of `query.tag`). CSV text, or rows with `format: 'json'`; `layout: 'wide'`
       * gives one row per link and bucket.
       */
      export: exportAnalytics,
    },
    /** Replaces the credential sent on later calls (undefined sends none). */
    setToken(token: string | undefined): void {
      credential = token;
    },
  };
}
