import { z } from 'zod';
import { storableText } from './common.js';

// The wire format of Firebase Dynamic Links' REST API (firebasedynamiclinks.googleapis.com/v1), as
// this service answers it: POST /v1/shortLinks and GET /v1/{shortLink}/linkStats. Field names and
// shapes are FDL's, so a backend that called Firebase keeps its code; docs/firebase-rest.md lists
// what each field becomes.

/** The longest value of one field: generous for a URL with its query, bounded so no field is unbounded. */
const MAX_FIELD_CHARACTERS = 4096;
/** The longest long dynamic link: its deep link and every other parameter, percent-encoded. */
export const MAX_LONG_DYNAMIC_LINK_CHARACTERS = 8192;

const text = (description: string) => storableText().trim().max(MAX_FIELD_CHARACTERS).optional().meta({ description });

export const androidInfoSchema = z
  .object({
    androidPackageName: text('The Android app that opens the link (apn)'),
    androidFallbackLink: text('Where Android visitors without the app go (afl)'),
    androidMinPackageVersionCode: text('The lowest versionCode of the app that can open the link (amv)'),
    androidLink: text('A link for Android apps in place of `link`: not applied here (a warning says so)'),
  })
  .strict();

export const iosInfoSchema = z
  .object({
    iosBundleId: text('The iOS app that opens the link (ibi)'),
    iosFallbackLink: text('Where iOS visitors without the app go (ifl)'),
    iosCustomScheme: text("The app's custom URL scheme, when it is not the bundle id (ius)"),
    iosIpadFallbackLink: text('Where iPad visitors without the app go (ipfl)'),
    iosIpadBundleId: text('The iPad app, when it is not the iPhone one (ipbi)'),
    iosAppStoreId: text("The app's App Store id, for visitors without the app (isi)"),
    iosMinimumVersion: text('The lowest version of the app that can open the link (imv)'),
  })
  .strict();

export const navigationInfoSchema = z
  .object({
    enableForcedRedirect: z.boolean().optional().meta({ description: 'Skip the app page and go to the app or store directly (efr)' }),
  })
  .strict();

export const googlePlayAnalyticsSchema = z
  .object({
    utmSource: text('utm_source'),
    utmMedium: text('utm_medium'),
    utmCampaign: text('utm_campaign'),
    utmTerm: text('utm_term'),
    utmContent: text('utm_content'),
    gclid: text('A Google Ads click id: not applied here (a warning says so)'),
  })
  .strict();

export const itunesConnectAnalyticsSchema = z
  .object({
    at: text('App Store affiliate token (at)'),
    ct: text('App Store campaign token (ct)'),
    mt: text('App Store media type (mt)'),
    pt: text('App Store provider token (pt)'),
  })
  .strict();

export const dynamicLinkInfoSchema = z
  .object({
    domainUriPrefix: text(
      'The short link domain with its scheme: SHORT_URL_BASE or https:// and one of your active custom domains; the default domain when absent',
    ).meta({ example: 'https://go.acme.com' }),
    dynamicLinkDomain: text("The short link domain without a scheme (FDL's older name for domainUriPrefix)"),
    link: text('The deep link: where the link sends visitors, and what the app opens (link)').meta({
      example: 'https://acme.com/spring',
    }),
    androidInfo: androidInfoSchema.optional(),
    iosInfo: iosInfoSchema.optional(),
    navigationInfo: navigationInfoSchema.optional(),
    analyticsInfo: z
      .object({
        googlePlayAnalytics: googlePlayAnalyticsSchema.optional(),
        itunesConnectAnalytics: itunesConnectAnalyticsSchema.optional(),
      })
      .strict()
      .optional(),
    socialMetaTagInfo: z
      .object({
        socialTitle: text('The title of the link preview card (st)'),
        socialDescription: text('The description of the link preview card (sd)'),
        socialImageLink: text('The image of the link preview card (si)'),
      })
      .strict()
      .optional(),
    desktopInfo: z
      .object({ desktopFallbackLink: text('Where desktop visitors go (ofl)') })
      .strict()
      .optional(),
  })
  .strict();
export type DynamicLinkInfo = z.infer<typeof dynamicLinkInfoSchema>;

export const SUFFIX_OPTIONS = ['OPTION_UNSPECIFIED', 'UNGUESSABLE', 'SHORT'] as const;
export type SuffixOption = (typeof SUFFIX_OPTIONS)[number];

/** POST /v1/shortLinks: a long dynamic link or its information, and how short the code should be. */
export const createShortLinkBodySchema = z
  .object({
    dynamicLinkInfo: dynamicLinkInfoSchema.optional(),
    longDynamicLink: storableText().trim().min(1).max(MAX_LONG_DYNAMIC_LINK_CHARACTERS).optional().meta({
      description: 'A long dynamic link on one of your domains: https://go.acme.com/?link=…&apn=…',
      example: 'https://go.acme.com/?link=https%3A%2F%2Facme.com%2Fspring&apn=com.acme.app',
    }),
    suffix: z
      .object({
        option: z.enum(SUFFIX_OPTIONS).optional().meta({
          description: 'UNGUESSABLE (the default): 17 random characters; SHORT: as short as is unique, from 4 characters',
        }),
      })
      .strict()
      .optional(),
    sdkVersion: text('The version of the client library that sent the request; ignored'),
  })
  .strict()
  .refine((body) => (body.dynamicLinkInfo === undefined) !== (body.longDynamicLink === undefined), {
    message: 'give either dynamicLinkInfo or longDynamicLink, not both',
    path: ['dynamicLinkInfo'],
  });
export type CreateShortLinkBody = z.infer<typeof createShortLinkBodySchema>;

export const dynamicLinkWarningSchema = z.object({
  warningCode: z.string().meta({ description: "One of FDL's warning codes", example: 'UNRECOGNIZED_PARAM' }),
  warningMessage: z.string(),
});

export const createShortLinkResponseSchema = z.object({
  shortLink: z.string().meta({ example: 'https://go.acme.com/Xk3Ud0aZb1Cq8LmNo' }),
  previewLink: z.string().meta({
    description: 'The short link with ?d=1: the page that shows where it sends each platform',
    example: 'https://go.acme.com/Xk3Ud0aZb1Cq8LmNo?d=1',
  }),
  warning: z.array(dynamicLinkWarningSchema).meta({ description: 'What of the request does not apply as FDL applied it; the link works' }),
});
export type CreateShortLinkResponse = z.infer<typeof createShortLinkResponseSchema>;

/** The longest span linkStats covers: ten years. */
export const MAX_DURATION_DAYS = 3650;

export const linkStatsParamsSchema = z.object({
  shortLink: storableText().min(1).max(MAX_FIELD_CHARACTERS).meta({
    description: 'The short link, URL-encoded: https%3A%2F%2Fgo.acme.com%2FXk3U',
    example: 'https%3A%2F%2Fgo.acme.com%2FXk3U',
  }),
});

/** The API key of these routes, in the query as FDL took it (Authorization: Bearer works too). */
export const apiKeyQuerySchema = z.object({
  key: z.string().optional().meta({ description: 'An API key of this service (or send it as Authorization: Bearer)', example: 'dlk_…' }),
});

export const linkStatsQuerySchema = apiKeyQuerySchema.extend({
  durationDays: z.coerce
    .number({ error: `must be a whole number of days, 1-${MAX_DURATION_DAYS}` })
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(MAX_DURATION_DAYS, `must be at most ${MAX_DURATION_DAYS}`)
    .meta({ description: 'How many days back from now to count', example: 7 }),
});

export const LINK_STAT_EVENTS = ['CLICK', 'REDIRECT', 'APP_INSTALL', 'APP_FIRST_OPEN', 'APP_RE_OPEN'] as const;
export const LINK_STAT_PLATFORMS = ['ANDROID', 'IOS', 'DESKTOP'] as const;

export const linkStatsResponseSchema = z.object({
  linkEventStats: z.array(
    z.object({
      platform: z.enum(LINK_STAT_PLATFORMS),
      count: z.string().meta({ description: 'The number of events, as a decimal string (FDL answered int64 as text)', example: '123' }),
      event: z.enum(LINK_STAT_EVENTS),
    }),
  ),
});
export type LinkStatsResponse = z.infer<typeof linkStatsResponseSchema>;

/** The error of these routes, in Google's API shape rather than the envelope, as FDL's clients parse it. */
export const googleErrorSchema = z
  .object({
    error: z.object({
      code: z.number().int().meta({ description: 'The HTTP status', example: 400 }),
      message: z.string(),
      status: z.string().meta({
        description: "Google's status name: INVALID_ARGUMENT, UNAUTHENTICATED, NOT_FOUND, RESOURCE_EXHAUSTED…",
        example: 'INVALID_ARGUMENT',
      }),
      details: z
        .array(
          z.object({
            '@type': z.literal('type.googleapis.com/google.rpc.BadRequest'),
            fieldViolations: z.array(z.object({ field: z.string(), description: z.string() })),
          }),
        )
        .optional(),
    }),
  })
  .meta({ id: 'GoogleError' });
export type GoogleError = z.infer<typeof googleErrorSchema>;
