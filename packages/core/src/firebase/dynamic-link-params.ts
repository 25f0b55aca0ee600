import type { z } from 'zod';
import { type CreateLinkBody, type LinkFields, linkFieldsSchema } from '../schemas/links.js';

// Firebase Dynamic Links described a link by one flat set of parameters: the query of a long
// dynamic link, the columns of the Takeout export and (nested) the REST API's dynamicLinkInfo all
// carry the same ones. This module is the one mapping from them to a link of this service; long
// links, the REST shim and the importer all go through it, so an FDL link behaves the same
// whichever way it arrives. docs/migrate-from-firebase.md lists what each parameter becomes.

/** The parameters of a long dynamic link, by their FDL names, in Takeout's column order. */
export const DYNAMIC_LINK_PARAMS = [
  'link',
  'apn',
  'afl',
  'amv',
  'ibi',
  'ifl',
  'ius',
  'ipfl',
  'ipbi',
  'isi',
  'imv',
  'efr',
  'ofl',
  'st',
  'sd',
  'si',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'at',
  'ct',
  'mt',
  'pt',
] as const;
export type DynamicLinkParam = (typeof DYNAMIC_LINK_PARAMS)[number];

/** An FDL link's parameters: the deep link, and any of the others. Values as FDL took them, as text. */
export type DynamicLinkParams = { link: string } & Partial<Record<Exclude<DynamicLinkParam, 'link'>, string>>;

const KNOWN: ReadonlySet<string> = new Set(DYNAMIC_LINK_PARAMS);
const UTM_PARAMS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
const APP_STORE_ANALYTICS = ['at', 'ct', 'mt', 'pt'] as const;

/** Something of the FDL link this service does not do as FDL did; the link still works. */
export interface DynamicLinkWarning {
  /** The parameter concerned. */
  param: DynamicLinkParam;
  message: string;
}

/** A parameter whose value cannot make a link, in the FDL name the caller used. */
export interface DynamicLinkError {
  param: DynamicLinkParam;
  message: string;
}

export type DynamicLinkMapping =
  | { ok: true; fields: LinkFields; warnings: DynamicLinkWarning[] }
  | { ok: false; errors: DynamicLinkError[] };

/**
 * The parameters of a long link's query (`/?link=…&apn=…`): each known one, its first value, blank
 * ones left out. Other parameters (`d`, anything FDL did not define) are not the link's. null when
 * the query has no `link`: it is not a long dynamic link.
 */
export function longLinkParams(query: URLSearchParams): DynamicLinkParams | null {
  const link = query.get('link')?.trim();
  if (!link) return null;
  const params: DynamicLinkParams = { link };
  for (const name of DYNAMIC_LINK_PARAMS) {
    if (name === 'link') continue;
    const value = query.get(name)?.trim();
    if (value) params[name] = value;
  }
  return params;
}

/** Whether `name` is one of FDL's link parameters. */
export const isDynamicLinkParam = (name: string): name is DynamicLinkParam => KNOWN.has(name);

/** The App Store page of `isi`, with the iTunes Connect analytics FDL appended to it. */
function appStoreUrl(params: DynamicLinkParams): string | undefined {
  if (params.isi === undefined) return undefined;
  const url = new URL(`https://apps.apple.com/app/id${encodeURIComponent(params.isi)}`);
  for (const name of APP_STORE_ANALYTICS) {
    if (params[name] !== undefined) url.searchParams.set(name, params[name]);
  }
  return url.href;
}

/**
 * The iOS app's URL for the link, as FDL built it: the app's custom scheme (`ius`, by default the
 * bundle id, lower-cased) with the deep link in `deep_link_id`. Apps built with FDL's SDK read that
 * URL without a network call, so they keep working unchanged. The iPad app's (`ipbi`) has its own
 * bundle id for a scheme: `ius` is the iPhone app's.
 */
const iosAppUrl = (params: DynamicLinkParams, bundleId: string, { ipad = false } = {}) =>
  `${((ipad ? undefined : params.ius) ?? bundleId).toLowerCase()}://google/link/?deep_link_id=${encodeURIComponent(params.link)}`;

/** `efr=1` as FDL read it: "1" turns forced redirects on; anything else leaves them off. */
export const forcedRedirect = (params: DynamicLinkParams): boolean => params.efr === '1';

/**
 * The link of this service an FDL link becomes (the table in docs/migrate-from-firebase.md):
 * `link` is the default destination, `apn`/`afl`/`amv` its Android app, `ibi`/`ius`/`ifl`/`isi`/`imv`
 * its iOS app (the App Store page of `isi`, with `at`/`ct`/`mt`/`pt`, when there is no `ifl`), `ofl`
 * the desktop destination, `st`/`sd`/`si` the social card, and the utm_* parameters its custom
 * parameters. `title` names the link (a Takeout row's "Link name"); without one, `st`, then `link`.
 * Validated with the API's own schema: an error names the FDL parameter that holds the bad value.
 */
export function linkFieldsFromDynamicLinkParams(params: DynamicLinkParams, { title }: { title?: string } = {}): DynamicLinkMapping {
  const warnings: DynamicLinkWarning[] = [];
  const utm = Object.fromEntries(UTM_PARAMS.flatMap((name) => (params[name] === undefined ? [] : [[name, params[name]]])));
  // A title is required and at most 200 characters; the fallbacks are cut to fit.
  const name = (title?.trim() || params.st || params.link).slice(0, 200);
  const body: CreateLinkBody = {
    title: name,
    defaultUrl: params.link,
    ...(params.apn !== undefined && {
      androidLink: {
        url: params.link,
        appPackageName: params.apn,
        ...(params.amv !== undefined && { minimumVersion: params.amv }),
        ...(params.afl !== undefined && { fallbackUrl: params.afl }),
      },
    }),
    ...(params.ibi !== undefined && {
      iosLink: {
        url: iosAppUrl(params, params.ibi),
        bundleId: params.ibi,
        ...(params.imv !== undefined && { minimumVersion: params.imv }),
        ...((params.ifl ?? appStoreUrl(params)) !== undefined && { fallbackUrl: params.ifl ?? appStoreUrl(params) }),
        ...(params.ipbi !== undefined && { ipadUrl: iosAppUrl(params, params.ipbi, { ipad: true }), ipadBundleId: params.ipbi }),
        ...(params.ipfl !== undefined && { ipadFallbackUrl: params.ipfl }),
        ...(forcedRedirect(params) && { skipAppPage: true }),
      },
    }),
    ...(params.ofl !== undefined && { desktopUrl: params.ofl }),
    ...((params.st ?? params.sd ?? params.si) !== undefined && {
      socialPreview: {
        title: params.st ?? name,
        ...(params.sd !== undefined && { description: params.sd }),
        ...(params.si !== undefined && { imageUrl: params.si }),
      },
    }),
    ...(Object.keys(utm).length > 0 && { customParameters: utm }),
  };
  if (params.ibi === undefined) {
    for (const param of ['ifl', 'ius', 'ipfl', 'ipbi', 'isi', 'imv', 'efr'] as const) {
      if (params[param] !== undefined) warnings.push({ param, message: 'is ignored without ibi (the iOS bundle id)' });
    }
  }
  if (params.apn === undefined) {
    for (const param of ['afl', 'amv'] as const) {
      if (params[param] !== undefined) warnings.push({ param, message: 'is ignored without apn (the Android package name)' });
    }
  }
  const parsed = linkFieldsSchema.safeParse(body);
  if (!parsed.success)
    return { ok: false, errors: parsed.error.issues.map((issue) => ({ param: paramOf(issue, params), message: issue.message })) };
  return { ok: true, fields: parsed.data, warnings };
}

/** The FDL parameter a validation issue of the mapped link is about. */
function paramOf(issue: z.core.$ZodIssue, params: DynamicLinkParams): DynamicLinkParam {
  const [top, inner] = issue.path.map(String);
  switch (`${top}.${inner}`) {
    case 'androidLink.appPackageName':
      return 'apn';
    case 'androidLink.minimumVersion':
      return 'amv';
    case 'androidLink.fallbackUrl':
      return 'afl';
    case 'iosLink.bundleId':
    case 'iosLink.url':
      return params.ius !== undefined && top === 'iosLink' && inner === 'url' ? 'ius' : 'ibi';
    case 'iosLink.minimumVersion':
      return 'imv';
    case 'iosLink.fallbackUrl':
      return params.ifl !== undefined ? 'ifl' : 'isi';
    case 'iosLink.ipadUrl':
    case 'iosLink.ipadBundleId':
      return 'ipbi';
    case 'iosLink.ipadFallbackUrl':
      return 'ipfl';
    case 'socialPreview.title':
      return 'st';
    case 'socialPreview.description':
      return 'sd';
    case 'socialPreview.imageUrl':
      return 'si';
    case 'customParameters.utm_source':
    case 'customParameters.utm_medium':
    case 'customParameters.utm_campaign':
    case 'customParameters.utm_term':
    case 'customParameters.utm_content':
      return inner as DynamicLinkParam;
  }
  if (top === 'desktopUrl') return 'ofl';
  return 'link';
}
