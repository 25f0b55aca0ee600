import { DYNAMIC_LINK_PARAMS, type DynamicLinkParams, linkFieldsFromDynamicLinkParams } from '../firebase/dynamic-link-params.js';
import type { ImportField, ImportFormat, ImportMapping, ImportProblem } from '../schemas/imports.js';
import { type CreateLinkBody, type LinkFields, linkFieldsSchema } from '../schemas/links.js';
import { shortPathCode } from './short-path.js';

// How each CSV format becomes links: one reader per file, built from its header row, that turns
// each record into a short code and the fields of a link, or the problems that refuse the row.
// docs/import.md lists every format's columns; the Takeout format goes through the one mapping of
// FDL parameters (firebase/dynamic-link-params.ts).

/** A row that can become a link: its code, its fields, and when its source made it. */
export interface ImportedLink {
  code: string;
  fields: LinkFields;
  /** The source's creation time, kept on a link the import creates. */
  createdAt?: Date;
  warnings: ImportProblem[];
}

export type ImportedRow = { ok: true; link: ImportedLink } | { ok: false; code?: string; errors: ImportProblem[] };

/** Turns one record of the file (its fields, in header order) into a link or the reasons it cannot be one. */
export type RowReader = (record: readonly string[]) => ImportedRow;

export type RowReaderResult = { ok: true; read: RowReader } | { ok: false; errors: ImportProblem[] };

/** The tag a link imported from an archived row carries (FDL and Bitly archive links without turning them off). */
export const ARCHIVED_TAG = 'archived';

/** A header as compared: lower-case letters and digits only ("iOS bundle ID (ibi)" → "iosbundleidibi"). */
const squeeze = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Index of the first header that is one of `names` (compared squeezed), or -1. */
const columnOf = (header: readonly string[], names: readonly string[]) => {
  const wanted = new Set(names.map(squeeze));
  return header.findIndex((name) => wanted.has(squeeze(name)));
};

/** Spreadsheet-style booleans: "TRUE", "yes", "1". */
const isTrue = (value: string | undefined) => /^(true|yes|y|1)$/i.test(value?.trim() ?? '');

/**
 * A creation time as exports write it: ISO 8601, `2024-05-01 12:30:00` (taken as UTC, with or
 * without a trailing `UTC`), or Unix seconds. undefined when blank or unreadable.
 */
export function parseCreationTime(value: string | undefined): Date | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d{9,11}$/.test(text)) return new Date(Number(text) * 1000);
  const iso = text.replace(/^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(:\d{2}(\.\d+)?)?)\s*(UTC|GMT|Z)?$/i, '$1T$2Z');
  const time = Date.parse(iso);
  return Number.isNaN(time) || time < 0 || time > Date.now() + 86_400_000 ? undefined : new Date(time);
}

// --- Google Takeout (Firebase Dynamic Links) ---------------------------------------------------

/** Takeout's 29 columns by name: the 25 FDL parameters, and four of its own. */
const TAKEOUT_NAMES: Record<string, string> = {
  shortLink: 'Short link',
  link: 'Deep link',
  apn: 'Android package name',
  afl: 'Android fallback link',
  amv: 'Android minimum package version code',
  ibi: 'iOS bundle ID',
  ifl: 'iOS fallback link',
  ius: 'iOS custom scheme',
  ipfl: 'iOS iPad fallback link',
  ipbi: 'iOS iPad bundle ID',
  isi: 'iOS app store ID',
  imv: 'iOS minimum version',
  efr: 'Enable forced redirect?',
  ofl: 'Desktop fallback link',
  st: 'Social title',
  sd: 'Social description',
  si: 'Social image link',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  utm_term: 'UTM term',
  utm_content: 'UTM content',
  at: 'iTunes Connect at',
  ct: 'iTunes Connect ct',
  mt: 'iTunes Connect mt',
  pt: 'iTunes Connect pt',
  archived: 'Archived?',
  linkName: 'Link name',
  createdAt: 'Creation timestamp',
};

/** A Takeout column: by the parameter in parentheses ("… (apn)"), by its name, or by the parameter alone. */
const takeoutColumn = (header: readonly string[], key: string) => {
  const byParameter = header.findIndex((name) => name.toLowerCase().includes(`(${key.toLowerCase()})`));
  return byParameter >= 0 ? byParameter : columnOf(header, [TAKEOUT_NAMES[key]!, key]);
};

function takeoutReader(header: readonly string[]): RowReaderResult {
  const columns = Object.fromEntries(Object.keys(TAKEOUT_NAMES).map((key) => [key, takeoutColumn(header, key)]));
  const missing = ['shortLink', 'link'].filter((key) => columns[key]! < 0);
  if (missing.length > 0)
    return { ok: false, errors: missing.map((key) => ({ field: TAKEOUT_NAMES[key]!, message: 'is a column the file lacks' })) };
  const cell = (record: readonly string[], key: string) => {
    const index = columns[key]!;
    const value = index >= 0 ? record[index]?.trim() : undefined;
    return value === '' ? undefined : value;
  };
  return {
    ok: true,
    read(record) {
      const path = shortPathCode(cell(record, 'shortLink') ?? '');
      if (!path.ok) return { ok: false, errors: [{ field: TAKEOUT_NAMES.shortLink!, message: path.message }] };
      const link = cell(record, 'link');
      if (link === undefined) return { ok: false, code: path.code, errors: [{ field: 'link', message: 'is empty' }] };
      const params: DynamicLinkParams = { link };
      for (const name of DYNAMIC_LINK_PARAMS) {
        if (name === 'link') continue;
        const value = cell(record, name);
        // Takeout writes the forced redirect as a spreadsheet boolean; FDL's parameter was `efr=1`.
        if (name === 'efr') {
          if (isTrue(value)) params.efr = '1';
        } else if (value !== undefined) params[name] = value;
      }
      const mapped = linkFieldsFromDynamicLinkParams(params, { title: cell(record, 'linkName') });
      if (!mapped.ok) return { ok: false, code: path.code, errors: mapped.errors.map(({ param, message }) => ({ field: param, message })) };
      const fields = isTrue(cell(record, 'archived')) ? { ...mapped.fields, tags: [ARCHIVED_TAG] } : mapped.fields;
      return {
        ok: true,
        link: {
          code: path.code,
          fields,
          createdAt: parseCreationTime(cell(record, 'createdAt')),
          warnings: mapped.warnings.map(({ param, message }) => ({ field: param, message })),
        },
      };
    },
  };
}

// --- Column formats: generic CSV with a mapping, and the exports of other shorteners -----------

/** Where a column of each field is found: a mapping's header, or the names a format's export uses. */
type ColumnNames = Partial<Record<ImportField | 'archived', readonly string[]>>;

/**
 * The columns each shortener's export is read from (docs/import.md): Bitly's links export, Shlink's
 * web client CSV (`short_urls.csv`), Kutt's link records, YOURLS' `yourls_url` table.
 */
const PRESETS: Record<Exclude<ImportFormat, 'takeout' | 'generic'>, ColumnNames> = {
  bitly: {
    code: ['link', 'bitlink', 'short link', 'short url', 'id'],
    defaultUrl: ['long_url', 'long url', 'destination url', 'destination'],
    title: ['title'],
    tags: ['tags'],
    createdAt: ['created_at', 'created', 'date created', 'creation date'],
    archived: ['archived'],
  },
  shlink: {
    code: ['shortCode', 'short code', 'shortUrl', 'short url'],
    defaultUrl: ['longUrl', 'long url'],
    title: ['title'],
    tags: ['tags'],
    createdAt: ['createdAt', 'dateCreated', 'created at'],
  },
  kutt: {
    code: ['address', 'link'],
    defaultUrl: ['target'],
    title: ['description'],
    expirationDate: ['expire_in', 'expires_at'],
    createdAt: ['created_at'],
  },
  yourls: {
    code: ['keyword'],
    defaultUrl: ['url'],
    title: ['title'],
    createdAt: ['timestamp'],
  },
};

/** The link field a validation issue's path names, back to the import field whose column held it. */
const IMPORT_FIELD_OF_PATH: Record<string, ImportField> = {
  title: 'title',
  defaultUrl: 'defaultUrl',
  tags: 'tags',
  desktopUrl: 'desktopUrl',
  'androidLink.url': 'androidUrl',
  'androidLink.appPackageName': 'androidPackageName',
  'androidLink.minimumVersion': 'androidMinimumVersion',
  'androidLink.fallbackUrl': 'androidFallbackUrl',
  'iosLink.url': 'iosUrl',
  'iosLink.bundleId': 'iosBundleId',
  'iosLink.minimumVersion': 'iosMinimumVersion',
  'iosLink.fallbackUrl': 'iosFallbackUrl',
  expirationDate: 'expirationDate',
  expiredUrl: 'expiredUrl',
  'socialPreview.title': 'socialTitle',
  'socialPreview.description': 'socialDescription',
  'socialPreview.imageUrl': 'socialImageUrl',
};

/** Tags as exports list them: separated by `|` (Shlink), `,` or `;`. */
const splitTags = (value: string) =>
  value
    .split(/[|,;]/)
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');

function columnsReader(header: readonly string[], names: ColumnNames, requiredBy: 'mapping' | 'format'): RowReaderResult {
  const columns = new Map<string, number>();
  const errors: ImportProblem[] = [];
  for (const [field, candidates] of Object.entries(names)) {
    const index = columnOf(header, candidates);
    if (index >= 0) columns.set(field, index);
    else if (requiredBy === 'mapping')
      errors.push({ field: `mapping.${field}`, message: `names a column the file lacks: ${candidates[0]}` });
  }
  for (const field of ['code', 'defaultUrl'] as const) {
    if (requiredBy === 'format' && !columns.has(field))
      errors.push({ field, message: `needs a column the file lacks: one of ${names[field]!.join(', ')}` });
  }
  if (errors.length > 0) return { ok: false, errors };

  const headerOf = (field: ImportField) => header[columns.get(field)!] ?? field;
  return {
    ok: true,
    read(record) {
      const cell = (field: ImportField | 'archived') => {
        const index = columns.get(field);
        const value = index === undefined ? undefined : record[index]?.trim();
        return value === '' ? undefined : value;
      };
      const path = shortPathCode(cell('code') ?? '');
      if (!path.ok) return { ok: false, errors: [{ field: headerOf('code'), message: path.message }] };
      const code = path.code;
      const defaultUrl = cell('defaultUrl');
      const title = cell('title') ?? code;
      const tags = [...splitTags(cell('tags') ?? ''), ...(isTrue(cell('archived')) ? [ARCHIVED_TAG] : [])];
      const android = { url: cell('androidUrl'), appPackageName: cell('androidPackageName') };
      const ios = { url: cell('iosUrl'), bundleId: cell('iosBundleId') };
      const social = { title: cell('socialTitle'), description: cell('socialDescription'), imageUrl: cell('socialImageUrl') };
      const body: Partial<CreateLinkBody> = {
        title,
        defaultUrl: defaultUrl ?? '',
        ...(tags.length > 0 && { tags }),
        ...(cell('desktopUrl') && { desktopUrl: cell('desktopUrl') }),
        ...((android.url ?? android.appPackageName) !== undefined && {
          androidLink: {
            url: android.url ?? defaultUrl ?? '',
            appPackageName: android.appPackageName ?? '',
            ...(cell('androidMinimumVersion') && { minimumVersion: cell('androidMinimumVersion') }),
            ...(cell('androidFallbackUrl') && { fallbackUrl: cell('androidFallbackUrl') }),
          },
        }),
        ...((ios.url ?? ios.bundleId) !== undefined && {
          iosLink: {
            url: ios.url ?? defaultUrl ?? '',
            bundleId: ios.bundleId ?? '',
            ...(cell('iosMinimumVersion') && { minimumVersion: cell('iosMinimumVersion') }),
            ...(cell('iosFallbackUrl') && { fallbackUrl: cell('iosFallbackUrl') }),
          },
        }),
        ...(cell('expirationDate') && { expirationDate: cell('expirationDate') }),
        ...(cell('expiredUrl') && { expiredUrl: cell('expiredUrl') }),
        ...((social.title ?? social.description ?? social.imageUrl) !== undefined && {
          socialPreview: {
            title: social.title ?? title,
            ...(social.description && { description: social.description }),
            ...(social.imageUrl && { imageUrl: social.imageUrl }),
          },
        }),
      };
      const parsed = linkFieldsSchema.safeParse(body);
      if (!parsed.success) {
        const errors = parsed.error.issues.map((issue) => {
          const path = issue.path.map(String).join('.');
          const field = IMPORT_FIELD_OF_PATH[path] ?? IMPORT_FIELD_OF_PATH[issue.path.map(String).slice(0, 1).join('.')];
          return { field: field && columns.has(field) ? headerOf(field) : path, message: issue.message };
        });
        return { ok: false, code, errors };
      }
      return { ok: true, link: { code, fields: parsed.data, createdAt: parseCreationTime(cell('createdAt')), warnings: [] } };
    },
  };
}

/**
 * The reader of a file of `format` whose first row is `header`; the columns it needs missing (or
 * those a generic mapping names): the problems, each naming a column.
 */
export function importRowReader(format: ImportFormat, header: readonly string[], mapping?: ImportMapping): RowReaderResult {
  if (format === 'takeout') return takeoutReader(header);
  if (format === 'generic') {
    const names = Object.fromEntries(Object.entries(mapping ?? {}).flatMap(([field, column]) => (column ? [[field, [column]]] : [])));
    return columnsReader(header, names, 'mapping');
  }
  return columnsReader(header, PRESETS[format], 'format');
}
