import type { CreateLinkInput, Link, UpdateLinkInput } from '@deeplink/client';

/** The link form's values: every field as the text its input holds. */
export interface LinkFormValues {
  /** The back-half of a new link ('' for a random code); fixed once the link exists. */
  slug: string;
  /** A custom domain of the account ('' for the default domain); fixed once the link exists. */
  domain: string;
  title: string;
  defaultUrl: string;
  desktopUrl: string;
  /** A datetime-local value (the browser's time zone), '' for none. */
  expirationDate: string;
  /** Where visitors go once the link has expired. */
  expiredUrl: string;
  android: { url: string; appPackageName: string; minimumVersion: string; fallbackUrl: string };
  ios: { url: string; bundleId: string; minimumVersion: string; fallbackUrl: string };
  /** What link-preview crawlers show. */
  preview: { title: string; description: string; imageUrl: string };
  parameters: { key: string; value: string }[];
  /** Comma- or space-separated. */
  tags: string;
  /** A new password ('' keeps the one the link has, or none); the API never returns one. */
  password: string;
  /** Remove the link's password (only offered when it has one). */
  removePassword: boolean;
  /** Clicks before the cap ('' for none), as typed. */
  clickCap: string;
  /** Where visitors go past the cap ('' for the 410 page). */
  capOverflowUrl: string;
}

/** The UTM parameters the form's helper fills in, in the order marketers think of them. */
export const UTM_FIELDS = ['source', 'medium', 'campaign', 'term', 'content'] as const;

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO instant as a datetime-local value in the browser's time zone. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A datetime-local value (browser's time zone) as an ISO instant; '' stays ''; text that is no date is sent as it is for the API to name. */
export function fromLocalInput(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

/** The form's values for a link, or an empty form. */
export function formValues(link?: Link): LinkFormValues {
  return {
    slug: '',
    domain: link?.domain ?? '',
    title: link?.title ?? '',
    defaultUrl: link?.defaultUrl ?? '',
    desktopUrl: link?.desktopUrl ?? '',
    expirationDate: toLocalInput(link?.expirationDate),
    expiredUrl: link?.expiredUrl ?? '',
    android: {
      url: link?.androidLink?.url ?? '',
      appPackageName: link?.androidLink?.appPackageName ?? '',
      minimumVersion: link?.androidLink?.minimumVersion ?? '',
      fallbackUrl: link?.androidLink?.fallbackUrl ?? '',
    },
    ios: {
      url: link?.iosLink?.url ?? '',
      bundleId: link?.iosLink?.bundleId ?? '',
      minimumVersion: link?.iosLink?.minimumVersion ?? '',
      fallbackUrl: link?.iosLink?.fallbackUrl ?? '',
    },
    preview: {
      title: link?.socialPreview?.title ?? '',
      description: link?.socialPreview?.description ?? '',
      imageUrl: link?.socialPreview?.imageUrl ?? '',
    },
    parameters: Object.entries(link?.customParameters ?? {}).map(([key, value]) => ({ key, value })),
    tags: (link?.tags ?? []).join(', '),
    password: '',
    removePassword: false,
    clickCap: link?.clickCap === undefined ? '' : String(link.clickCap),
    capOverflowUrl: link?.capOverflowUrl ?? '',
  };
}

/** The UTM parameters' keys, which the form shows in fields of their own rather than as rows. */
export const UTM_KEYS = new Set(UTM_FIELDS.map((field) => `utm_${field}`));

/**
 * A web address as people type it: `example.com/x` gets `https://` in front (what a browser's
 * address bar does); anything with a scheme already, and '', stay as they are.
 */
export function withScheme(text: string): string {
  const url = text.trim();
  return url === '' || /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`;
}

/** The values with `https://` added to every web address typed without a scheme (app links keep theirs). */
export function withSchemes(values: LinkFormValues): LinkFormValues {
  return {
    ...values,
    defaultUrl: withScheme(values.defaultUrl),
    desktopUrl: withScheme(values.desktopUrl),
    expiredUrl: withScheme(values.expiredUrl),
    capOverflowUrl: withScheme(values.capOverflowUrl),
    android: { ...values.android, fallbackUrl: withScheme(values.android.fallbackUrl) },
    ios: { ...values.ios, fallbackUrl: withScheme(values.ios.fallbackUrl) },
    preview: { ...values.preview, imageUrl: withScheme(values.preview.imageUrl) },
  };
}

/** True when a datetime-local value names a moment already past: the link would be expired at once. */
export const isPast = (value: string, now = Date.now()): boolean => value !== '' && new Date(value).getTime() <= now;

/** The tags of the form's text: lower-cased, split on commas and spaces, without repeats. */
export function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((tag) => tag.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
}

/** The parameter rows as an object; rows without a key are left out (a later row wins). */
export function parameterObject(rows: LinkFormValues['parameters']): Record<string, string> {
  return Object.fromEntries(rows.filter((row) => row.key.trim() !== '').map((row) => [row.key.trim(), row.value]));
}

/** The fields of a section (a platform, the social preview) that hold text, or undefined when it is empty (no such destination). */
function section<T extends Record<string, string>>(fields: T): Partial<T> | undefined {
  const filled = Object.entries(fields).filter(([, value]) => value.trim() !== '');
  return filled.length === 0 ? undefined : (Object.fromEntries(filled.map(([key, value]) => [key, value.trim()])) as Partial<T>);
}

/**
 * The create body: empty optional fields are left out. A platform section with anything filled in
 * is sent as it is, so the API names whatever required field is still missing.
 */
export function createInput(values: LinkFormValues): CreateLinkInput {
  const input: CreateLinkInput = { title: values.title.trim(), defaultUrl: values.defaultUrl.trim() };
  if (values.slug.trim()) input.slug = values.slug.trim();
  if (values.domain) input.domain = values.domain;
  if (values.desktopUrl.trim()) input.desktopUrl = values.desktopUrl.trim();
  if (values.expirationDate) input.expirationDate = fromLocalInput(values.expirationDate);
  if (values.expiredUrl.trim()) input.expiredUrl = values.expiredUrl.trim();
  const android = section(values.android);
  if (android) input.androidLink = android as CreateLinkInput['androidLink'];
  const ios = section(values.ios);
  if (ios) input.iosLink = ios as CreateLinkInput['iosLink'];
  const preview = section(values.preview);
  if (preview) input.socialPreview = preview as CreateLinkInput['socialPreview'];
  const parameters = parameterObject(values.parameters);
  if (Object.keys(parameters).length > 0) input.customParameters = parameters;
  const tags = parseTags(values.tags);
  if (tags.length > 0) input.tags = tags;
  if (values.password !== '') input.password = values.password;
  if (values.clickCap.trim()) input.clickCap = Number(values.clickCap); // a number input: the API names a fraction or a negative
  if (values.capOverflowUrl.trim()) input.capOverflowUrl = values.capOverflowUrl.trim();
  return input;
}

/** What changed in one section (a platform, the social preview), as merge-patch fields: a cleared optional field is null. */
function sectionPatch(
  before: object | undefined,
  after: Record<string, string>,
  required: readonly string[],
): Record<string, string | null> | null | undefined {
  const filled = section(after);
  if (!filled) return before ? null : undefined; // emptied: the destination goes
  if (!before) return filled as Record<string, string>; // new destination: every field
  const patch: Record<string, string | null> = {};
  for (const [key, raw] of Object.entries(after)) {
    const value = raw.trim();
    if (value === ((before as Record<string, string | undefined>)[key] ?? '')) continue;
    // A required field cleared is sent empty, so the API says it is required.
    patch[key] = value === '' && !required.includes(key) ? null : value;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/**
 * The PUT body for the changes from `link` to `values`, and nothing else (SPEC's merge rules):
 * unchanged fields are left out, cleared optional fields are null, a platform or the social
 * preview sends only the fields that changed, and custom parameters only the keys added, changed (value) or removed (null).
 */
export function updateInput(link: Link, values: LinkFormValues): UpdateLinkInput {
  const patch: UpdateLinkInput = {};
  const title = values.title.trim();
  if (title !== link.title) patch.title = title;
  const defaultUrl = values.defaultUrl.trim();
  if (defaultUrl !== link.defaultUrl) patch.defaultUrl = defaultUrl;
  const desktopUrl = values.desktopUrl.trim();
  if (desktopUrl !== (link.desktopUrl ?? '')) patch.desktopUrl = desktopUrl === '' ? null : desktopUrl;
  const expiredUrl = values.expiredUrl.trim();
  if (expiredUrl !== (link.expiredUrl ?? '')) patch.expiredUrl = expiredUrl === '' ? null : expiredUrl;
  if (values.expirationDate !== toLocalInput(link.expirationDate)) {
    patch.expirationDate = values.expirationDate === '' ? null : fromLocalInput(values.expirationDate);
  }
  const android = sectionPatch(link.androidLink, values.android, ['url', 'appPackageName']);
  if (android !== undefined) patch.androidLink = android as UpdateLinkInput['androidLink'];
  const ios = sectionPatch(link.iosLink, values.ios, ['url', 'bundleId']);
  if (ios !== undefined) patch.iosLink = ios as UpdateLinkInput['iosLink'];
  const preview = sectionPatch(link.socialPreview, values.preview, ['title']);
  if (preview !== undefined) patch.socialPreview = preview as UpdateLinkInput['socialPreview'];

  const before = link.customParameters ?? {};
  const after = parameterObject(values.parameters);
  if (Object.keys(after).length === 0 && Object.keys(before).length > 0) patch.customParameters = null;
  else {
    const changes: Record<string, string | null> = {};
    for (const [key, value] of Object.entries(after)) if (before[key] !== value) changes[key] = value;
    for (const key of Object.keys(before)) if (!(key in after)) changes[key] = null;
    if (Object.keys(changes).length > 0) patch.customParameters = changes;
  }

  const tags = parseTags(values.tags);
  const oldTags = link.tags ?? [];
  if (tags.join('\n') !== oldTags.join('\n')) patch.tags = tags.length === 0 ? null : tags;

  // The password is write-only: a typed one replaces it, the box removes it, nothing keeps it.
  if (values.password !== '') patch.password = values.password;
  else if (values.removePassword && link.passwordProtected) patch.password = null;
  const clickCap = values.clickCap.trim();
  if (clickCap !== (link.clickCap === undefined ? '' : String(link.clickCap))) patch.clickCap = clickCap === '' ? null : Number(clickCap);
  const capOverflowUrl = values.capOverflowUrl.trim();
  if (capOverflowUrl !== (link.capOverflowUrl ?? '')) patch.capOverflowUrl = capOverflowUrl === '' ? null : capOverflowUrl;
  return patch;
}

/**
 * The API's field errors by form field: `androidLink.url` and the like are the inputs' names;
 * `customParameters.<key>` goes to the parameters section; anything else to the form as a whole.
 */
export function fieldErrors(details: readonly { field: string; message: string }[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const { field, message } of details) {
    const key = field.startsWith('customParameters') ? 'customParameters' : field.startsWith('tags') ? 'tags' : field;
    errors[key] = errors[key] ? `${errors[key]}; ${message}` : message;
  }
  return errors;
}
