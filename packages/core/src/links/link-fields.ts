import type postgres from 'postgres';
import type { AndroidLink, IosLink, Link, LinkFields, LinkSummary, SocialPreview } from '../schemas/links.js';

// Every field of a link, once: the column it is read from, the input field it is written from,
// the key it has in the API's answers and in the routing record the redirector reads from Redis.
// The record type, the SELECT list, the INSERT/UPDATE values, the API mapping and the cached
// record are all derived from LINK_FIELDS; docs/extending.md walks through adding a field.

/** What the redirector's record logic may look at besides a field's own value. */
export interface CacheContext {
  iosLink: IosLink | null;
  socialPreview: SocialPreview | null;
}

/**
 * How a column is stored, which decides how a value is bound on INSERT and UPDATE: as it is, as
 * JSON (jsonb columns, null for absent), or as a text array (never null, [] for absent).
 */
export type Storage = 'value' | 'json' | 'text[]';

/** A column's storage and the type its value has in the record. */
export interface ColumnType<T> {
  storage: Storage;
  /**
   * Turns the value postgres.js returns into the record's, for a column it does not already parse
   * into the right type; absent for the rest (text, timestamptz as Date, jsonb, text[]), so that
   * rows are used as they come, without a copy of each.
   */
  read?: (value: unknown) => T;
}

/** A column of type T, which the migrations guarantee and postgres.js already parses. */
const column = <T>(storage: Storage = 'value'): ColumnType<T> => ({ storage });

/** A value selected from other tables (a subquery over the link's row), never written. */
export type ComputedColumn = (sql: postgres.Sql) => postgres.Fragment;

export interface LinkField<T, Input extends keyof LinkFields, ResponseKey extends string, Response, CacheKey extends string, Cached> {
  /** The column of `links` it is read from (and written to), or the subquery it is computed by. */
  column: string | ComputedColumn;
  type: ColumnType<T>;
  /** The field of LinkFields (POST and the merged PUT) it is written from; absent: read-only. */
  input?: Input;
  /**
   * Its place in the API's Link (and, with `summary`, in list items); `value` returns undefined
   * to leave the key out. An input field's key must be its input name: PUT merges into it.
   */
  response?: { key: ResponseKey; value: (value: T) => Response; summary?: true };
  /**
   * Its place in the redirector's routing record; undefined leaves the key out. A value that is
   * never undefined makes the key required in CachedLink.
   */
  cache?: { key: CacheKey; value: (value: T, link: CacheContext) => Cached };
}

/** One entry of LINK_FIELDS, its types inferred from `type` and the mapping functions. */
const field = <
  T,
  Input extends keyof LinkFields = never,
  ResponseKey extends string = never,
  Response = never,
  CacheKey extends string = never,
  Cached = never,
>(
  spec: LinkField<T, Input, ResponseKey, Response, CacheKey, Cached>,
) => spec;

const text = column<string>();
const optionalText = column<string | null>();
const timestamp = column<Date>();
const optionalTimestamp = column<Date | null>();
const json = <T>() => column<T | null>('json');

const iso = (date: Date) => date.toISOString();
const present = <T>(value: T | null): T | undefined => value ?? undefined;

/** What the link's owner registered about the app its iosLink opens (see POST /apps). */
export interface RegisteredIosApp {
  name?: string;
  appStoreId?: string;
}

/**
 * The fields of a link. Their order is the order of the cached record's keys, kept as the records
 * already in Redis have them (services/api/test/link-fields.test.ts checks a record byte for byte).
 */
export const LINK_FIELDS = {
  id: field({
    column: 'id',
    type: text,
    response: { key: 'id', value: (id) => id, summary: true },
    cache: { key: 'id', value: (id) => id },
  }),
  userId: field({ column: 'user_id', type: text }),
  /** The short code; the API answers with the short URL built from it and the domain. */
  code: field({ column: 'code', type: text }),
  /** The custom domain's hostname; null on the default domain. */
  domain: field({
    column: (sql) => sql`(SELECT d.hostname FROM domains d WHERE d.id = links.domain_id)`,
    type: optionalText,
    response: { key: 'domain', value: present },
  }),
  defaultUrl: field({
    column: 'default_url',
    type: text,
    input: 'defaultUrl',
    response: { key: 'defaultUrl', value: (url) => url, summary: true },
    cache: { key: 'defaultUrl', value: (url) => url },
  }),
  androidLink: field({
    column: 'android_link',
    type: json<AndroidLink>(),
    input: 'androidLink',
    response: { key: 'androidLink', value: present },
    cache: { key: 'androidLink', value: present },
  }),
  iosLink: field({
    column: 'ios_link',
    type: json<IosLink>(),
    input: 'iosLink',
    response: { key: 'iosLink', value: present },
    cache: { key: 'iosLink', value: present },
  }),
  desktopUrl: field({
    column: 'desktop_url',
    type: optionalText,
    input: 'desktopUrl',
    response: { key: 'desktopUrl', value: present },
    cache: { key: 'desktopUrl', value: present },
  }),
  customParameters: field({
    column: 'custom_parameters',
    type: json<Record<string, string>>(),
    input: 'customParameters',
    response: { key: 'customParameters', value: present },
    // Nothing to merge into a destination: left out, as the redirector's fast path expects.
    cache: { key: 'customParameters', value: (params) => (params && Object.keys(params).length > 0 ? params : undefined) },
  }),
  expiresAt: field({
    column: 'expires_at',
    type: optionalTimestamp,
    input: 'expirationDate',
    response: { key: 'expirationDate', value: (date) => (date ? iso(date) : undefined) },
    // Epoch milliseconds: compared with the clock on every visit, never parsed there.
    cache: { key: 'expiresAt', value: (date) => date?.getTime() },
  }),
  /** Lower-case, duplicates removed; empty when the link has none. Not routing data: never cached. */
  tags: field({
    column: 'tags',
    type: column<string[]>('text[]'),
    input: 'tags',
    response: { key: 'tags', value: (tags) => (tags.length > 0 ? tags : undefined) },
  }),
  /** Where an expired link sends visitors. */
  expiredUrl: field({
    column: 'expired_url',
    type: optionalText,
    input: 'expiredUrl',
    response: { key: 'expiredUrl', value: present },
    cache: { key: 'expiredUrl', value: present },
  }),
  /** What link-preview crawlers are shown. */
  socialPreview: field({
    column: 'social_preview',
    type: json<SocialPreview>(),
    input: 'socialPreview',
    response: { key: 'socialPreview', value: present },
    cache: { key: 'socialPreview', value: present },
  }),
  title: field({
    column: 'title',
    type: text,
    input: 'title',
    response: { key: 'title', value: (title) => title, summary: true },
    // The iOS page shows it, unless the preview's title takes its place; no other route needs it.
    cache: { key: 'title', value: (title, link) => (link.iosLink && !link.socialPreview ? title : undefined) },
  }),
  /** The owner's registered iOS app of iosLink.bundleId, if any: the iOS page names it and links its App Store id. */
  iosApp: field({
    column: (sql) => sql`(SELECT jsonb_strip_nulls(jsonb_build_object('name', a.name, 'appStoreId', a.app_store_id)) FROM apps a
      WHERE a.user_id = links.user_id AND a.platform = 'ios' AND a.bundle_id = links.ios_link->>'bundleId')`,
    type: column<RegisteredIosApp | null>(),
    cache: { key: 'iosApp', value: (app, link) => (link.iosLink && app && (app.name || app.appStoreId) ? app : undefined) },
  }),
  /** After this many clicks the link sends visitors to capOverflowUrl (or answers 410); the count is in Redis. */
  clickCap: field({
    column: 'click_cap',
    type: column<number | null>(),
    input: 'clickCap',
    response: { key: 'clickCap', value: present },
    cache: { key: 'clickCap', value: present },
  }),
  /** Where a capped link sends visitors past its cap. */
  capOverflowUrl: field({
    column: 'cap_overflow_url',
    type: optionalText,
    input: 'capOverflowUrl',
    response: { key: 'capOverflowUrl', value: present },
    cache: { key: 'capOverflowUrl', value: present },
  }),
  /**
   * The argon2id hash of the link's password; null for an open link. Never answered, only whether
   * there is one. Cached: the redirector recognises a protected link by the key and checks the
   * visitor's answer against it without a database read (see docs/redirect.md).
   */
  passwordHash: field({
    column: 'password_hash',
    type: optionalText,
    response: { key: 'passwordProtected', value: (hash) => hash !== null },
    cache: { key: 'passwordHash', value: present },
  }),
  createdAt: field({ column: 'created_at', type: timestamp, response: { key: 'createdAt', value: iso, summary: true } }),
  updatedAt: field({ column: 'updated_at', type: timestamp, response: { key: 'updatedAt', value: iso, summary: true } }),
};

type Fields = typeof LINK_FIELDS;
type FieldName = keyof Fields;
/** An entry of LINK_FIELDS as the loops below walk it: each one only ever gets its own field's value. */
type AnyField = LinkField<unknown, keyof LinkFields, string, unknown, string, unknown>;
const FIELD_ENTRIES = Object.entries(LINK_FIELDS) as unknown as [FieldName, AnyField][];

/** A link as the repository returns it: one property per entry of LINK_FIELDS. */
export type LinkRecord = { [K in FieldName]: Fields[K]['type'] extends ColumnType<infer T> ? T : never };

/** `{ key: value }` objects whose keys are optional where the value may be undefined. */
type Shaped<Entries extends { key: string; value: unknown }> = {
  [E in Entries as undefined extends E['value'] ? never : E['key']]: E['value'];
} & {
  [E in Entries as undefined extends E['value'] ? E['key'] : never]?: Exclude<E['value'], undefined>;
};
type Flatten<T> = { [K in keyof T]: T[K] };

type ResponseEntry<K extends FieldName> = Fields[K] extends { response?: { key: infer Key; value: (value: never) => infer Value } }
  ? [Key] extends [never]
    ? never
    : { key: Key; value: Value }
  : never;
type CacheEntry<K extends FieldName> = Fields[K] extends { cache?: { key: infer Key; value: (value: never, link: never) => infer Value } }
  ? [Key] extends [never]
    ? never
    : { key: Key; value: Value }
  : never;

/** What the redirector needs to route a visit (JSON under the link's key, see linkCacheId): nothing else of the link is cached. */
export type CachedLink = Flatten<Shaped<{ [K in FieldName]: CacheEntry<K> }[FieldName]>>;

/** The API's Link but for `url`, which the service builds from the code, the domain and SHORT_URL_BASE. */
export type LinkResponseFields = Flatten<Shaped<{ [K in FieldName]: ResponseEntry<K> }[FieldName]>>;

type InputOf<K extends FieldName> = Fields[K] extends { input?: infer Input } ? Extract<Input, keyof LinkFields> : never;

// Compile-time checks that the table and the zod schemas of the API agree: a field added to one
// and not the other fails `npm run typecheck` here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type LinkFieldChecks = [
  /** Every field a client sends is written to a column, and nothing else is. */
  Assert<Same<{ [K in FieldName]: InputOf<K> }[FieldName], keyof LinkFields>>,
  /** Every input fits its column (a value, or undefined for "none"). */
  Assert<
    {
      [K in FieldName]: [InputOf<K>] extends [never] ? true : Required<LinkFields>[InputOf<K>] extends LinkRecord[K] ? true : false;
    }[FieldName]
  >,
  /** An editable field is answered under its input name, so that a PUT merges into what GET shows. */
  Assert<{ [K in FieldName]: [InputOf<K>] extends [never] ? true : Same<ResponseEntry<K>['key'], InputOf<K>> }[FieldName]>,
  /** The API's answers carry exactly the fields Link declares (url aside). */
  Assert<Same<LinkResponseFields, Omit<Link, 'url'>>>,
  /** The record carries everything the cached record's logic looks at. */
  Assert<LinkRecord extends CacheContext ? true : false>,
];

/** The SELECT list of a link, every value under its field's name; built once per pool. */
export function linkColumns(sql: postgres.Sql): postgres.Fragment {
  return FIELD_ENTRIES.map(([name, { column }]) =>
    typeof column === 'string' ? sql`${sql(column)} AS ${sql(name)}` : sql`${column(sql)} AS ${sql(name)}`,
  ).reduce((list, item) => sql`${list}, ${item}`);
}

const READ = FIELD_ENTRIES.flatMap(([name, { type }]) => (type.read ? [{ name, read: type.read }] : []));

/** A row selected with linkColumns (each value under its field's name), as a LinkRecord. */
export function readLink(row: Record<string, unknown>): LinkRecord {
  for (const { name, read } of READ) row[name] = read(row[name]);
  return row as LinkRecord;
}

const WRITTEN = FIELD_ENTRIES.flatMap(([, { column, type, input }]) =>
  input !== undefined && typeof column === 'string' ? [{ column, storage: type.storage, input }] : [],
);

/**
 * The columns a create or update writes, by column name, for postgres.js' `sql(values)` helper
 * (which binds every value as a parameter). `bind` turns a value into a JSON or array parameter.
 */
export function linkColumnValues(fields: LinkFields, bind: (storage: Storage, value: unknown) => unknown): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const { column, storage, input } of WRITTEN) values[column] = bind(storage, fields[input]);
  return values;
}

const RESPONSE = FIELD_ENTRIES.flatMap(([name, { response, input }]) => (response ? [{ name, input, ...response }] : []));
const SUMMARY = RESPONSE.filter((entry) => entry.summary);
const EDITABLE = RESPONSE.filter((entry) => entry.input !== undefined);

const answer = (link: LinkRecord, entries: typeof RESPONSE): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const { name, key, value } of entries) {
    const shown = value(link[name]);
    if (shown !== undefined) out[key] = shown;
  }
  return out;
};

/** A link as the API shows it, but for `url`. */
export const linkResponseFields = (link: LinkRecord) => answer(link, RESPONSE) as LinkResponseFields;

/** The fields of a list item (LinkSummary), but for `url`. */
export const linkSummaryFields = (link: LinkRecord) => answer(link, SUMMARY) as Omit<LinkSummary, 'url'>;

/** The editable fields as a client would send them (the API's form of each), for a PUT to merge into. */
export const editableLinkFields = (link: LinkRecord) => answer(link, EDITABLE) as Record<string, unknown>;

const CACHED = FIELD_ENTRIES.flatMap(([name, { cache }]) => (cache ? [{ name, ...cache }] : []));

/** The routing record the redirector reads, keys in LINK_FIELDS order. */
export function toCachedLink(link: LinkRecord): CachedLink {
  const cached: Record<string, unknown> = {};
  for (const { name, key, value } of CACHED) {
    const kept = value(link[name], link);
    if (kept !== undefined) cached[key] = kept;
  }
  return cached as CachedLink;
}
