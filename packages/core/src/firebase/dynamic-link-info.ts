import type { DynamicLinkInfo } from '../schemas/firebase-rest.js';
import type { DynamicLinkParam, DynamicLinkParams } from './dynamic-link-params.js';

// FDL's REST API described a link by `dynamicLinkInfo`, the long link's parameters nested by
// platform. This module flattens it into those parameters, so the REST shim goes through the one
// mapping (linkFieldsFromDynamicLinkParams) like long links and the importer do.

/** Where each parameter sits in dynamicLinkInfo, for reading it and for naming it in answers. */
export const DYNAMIC_LINK_INFO_FIELDS: Readonly<Record<DynamicLinkParam, string>> = {
  link: 'dynamicLinkInfo.link',
  apn: 'dynamicLinkInfo.androidInfo.androidPackageName',
  afl: 'dynamicLinkInfo.androidInfo.androidFallbackLink',
  amv: 'dynamicLinkInfo.androidInfo.androidMinPackageVersionCode',
  ibi: 'dynamicLinkInfo.iosInfo.iosBundleId',
  ifl: 'dynamicLinkInfo.iosInfo.iosFallbackLink',
  ius: 'dynamicLinkInfo.iosInfo.iosCustomScheme',
  ipfl: 'dynamicLinkInfo.iosInfo.iosIpadFallbackLink',
  ipbi: 'dynamicLinkInfo.iosInfo.iosIpadBundleId',
  isi: 'dynamicLinkInfo.iosInfo.iosAppStoreId',
  imv: 'dynamicLinkInfo.iosInfo.iosMinimumVersion',
  efr: 'dynamicLinkInfo.navigationInfo.enableForcedRedirect',
  ofl: 'dynamicLinkInfo.desktopInfo.desktopFallbackLink',
  st: 'dynamicLinkInfo.socialMetaTagInfo.socialTitle',
  sd: 'dynamicLinkInfo.socialMetaTagInfo.socialDescription',
  si: 'dynamicLinkInfo.socialMetaTagInfo.socialImageLink',
  utm_source: 'dynamicLinkInfo.analyticsInfo.googlePlayAnalytics.utmSource',
  utm_medium: 'dynamicLinkInfo.analyticsInfo.googlePlayAnalytics.utmMedium',
  utm_campaign: 'dynamicLinkInfo.analyticsInfo.googlePlayAnalytics.utmCampaign',
  utm_term: 'dynamicLinkInfo.analyticsInfo.googlePlayAnalytics.utmTerm',
  utm_content: 'dynamicLinkInfo.analyticsInfo.googlePlayAnalytics.utmContent',
  at: 'dynamicLinkInfo.analyticsInfo.itunesConnectAnalytics.at',
  ct: 'dynamicLinkInfo.analyticsInfo.itunesConnectAnalytics.ct',
  mt: 'dynamicLinkInfo.analyticsInfo.itunesConnectAnalytics.mt',
  pt: 'dynamicLinkInfo.analyticsInfo.itunesConnectAnalytics.pt',
};

/** A field of dynamicLinkInfo that has no long-link parameter, so no link of this service can hold it. */
export interface IgnoredInfoField {
  field: string;
  message: string;
}

/**
 * The long-link parameters `info` stands for, and the fields it has that none stands for
 * (`androidInfo.androidLink`, `googlePlayAnalytics.gclid`): those are left out, never silently.
 * Blank values are left out as a long link's are; `enableForcedRedirect: true` is `efr=1`. The
 * domain fields are not parameters: the caller reads them. null without a `link`.
 */
export function dynamicLinkParamsFromInfo(info: DynamicLinkInfo): { params: DynamicLinkParams; ignored: IgnoredInfoField[] } | null {
  const { androidInfo, iosInfo, navigationInfo, analyticsInfo, socialMetaTagInfo, desktopInfo } = info;
  const play = analyticsInfo?.googlePlayAnalytics;
  const itunes = analyticsInfo?.itunesConnectAnalytics;
  const values: Record<DynamicLinkParam, string | undefined> = {
    link: info.link,
    apn: androidInfo?.androidPackageName,
    afl: androidInfo?.androidFallbackLink,
    amv: androidInfo?.androidMinPackageVersionCode,
    ibi: iosInfo?.iosBundleId,
    ifl: iosInfo?.iosFallbackLink,
    ius: iosInfo?.iosCustomScheme,
    ipfl: iosInfo?.iosIpadFallbackLink,
    ipbi: iosInfo?.iosIpadBundleId,
    isi: iosInfo?.iosAppStoreId,
    imv: iosInfo?.iosMinimumVersion,
    efr: navigationInfo?.enableForcedRedirect ? '1' : undefined,
    ofl: desktopInfo?.desktopFallbackLink,
    st: socialMetaTagInfo?.socialTitle,
    sd: socialMetaTagInfo?.socialDescription,
    si: socialMetaTagInfo?.socialImageLink,
    utm_source: play?.utmSource,
    utm_medium: play?.utmMedium,
    utm_campaign: play?.utmCampaign,
    utm_term: play?.utmTerm,
    utm_content: play?.utmContent,
    at: itunes?.at,
    ct: itunes?.ct,
    mt: itunes?.mt,
    pt: itunes?.pt,
  };
  const link = values.link?.trim();
  if (!link) return null;
  const params: DynamicLinkParams = { link };
  for (const [name, value] of Object.entries(values) as [DynamicLinkParam, string | undefined][]) {
    if (name !== 'link' && value?.trim()) params[name] = value.trim();
  }
  const ignored: IgnoredInfoField[] = [];
  if (androidInfo?.androidLink?.trim())
    ignored.push({
      field: 'dynamicLinkInfo.androidInfo.androidLink',
      message: 'Android apps open `link`: a separate Android link is not applied',
    });
  if (play?.gclid?.trim())
    ignored.push({ field: 'dynamicLinkInfo.analyticsInfo.googlePlayAnalytics.gclid', message: 'Google Ads click ids are not passed on' });
  return { params, ignored };
}
