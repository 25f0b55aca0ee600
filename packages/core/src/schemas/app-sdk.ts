import { z } from 'zod';
import { MAX_URL_BYTES, storableText, successEnvelope, webUrlSchema } from './common.js';

/** The header an app sends its publishable app key in. */
export const APP_KEY_HEADER = 'x-app-key';

/** An id an app makes up (an open's, an install's): 8-64 of A-Z a-z 0-9 - _, so a UUID fits. */
const clientId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8-64 letters, digits, "-" or "_" (a UUID fits)');

/** POST /app/open: the URL an app was opened with (a Universal Link or an App Link). */
export const appOpenBodySchema = z
  .object({
    url: webUrlSchema.meta({
      description: 'The short URL the app was opened with, on the default short domain or a custom one, query string included',
      example: 'https://go.acme.com/spring',
    }),
    openId: clientId
      .optional()
      .meta({ description: 'An id the app makes up for this open, the same on retries', example: '3f0c9a52-0c1e-4b8e-9d7a-1f2e3d4c5b6a' }),
    installId: clientId.optional().meta({
      description:
        "The id the app keeps for this install (the installId of POST /app/install): the open's unique counts count the install once, however often it opens; without it, each open (openId) counts as one",
      example: '9b2d7c1e-5f4a-4e37-a0c1-2b3d4e5f6a7b',
    }),
    firstLaunch: z.boolean().optional().meta({ description: 'Whether this is the first launch after the app was installed' }),
  })
  .strict();
export type AppOpenBody = z.infer<typeof appOpenBodySchema>;

/** What the app needs of the link it was opened with. */
export const appOpenResultSchema = z
  .object({
    link: z.object({
      id: z.string(),
      code: z.string().meta({ example: 'spring' }),
      url: z.string().meta({ description: "The link's short URL, as the link's own `url`", example: 'https://go.acme.com/spring' }),
    }),
    deepLink: z.string().optional().meta({
      description:
        "The link's app URL for this app's platform (its iosLink or androidLink), when that targets this app (same bundle id or package name); absent otherwise",
      example: 'acmeshop://product/42',
    }),
    minimumVersion: z.string().optional().meta({
      description: "The app version the link's iosLink or androidLink asks for, when it sets one and targets this app",
      example: '2.4',
    }),
    parameters: z.record(z.string(), z.string()).meta({
      description: "The link's customParameters, the query parameters the redirect appends to its web destinations ({} when none)",
      example: { utm_source: 'newsletter', utm_campaign: 'spring' },
    }),
    webUrl: z.string().meta({
      description: "The link's default URL with its parameters appended, as the redirect sends a browser",
      example: 'https://acme.com/spring?utm_source=newsletter&utm_campaign=spring',
    }),
  })
  .meta({ id: 'AppOpenResult' });
export type AppOpenResult = z.infer<typeof appOpenResultSchema>;
export const appOpenResponseSchema = successEnvelope(appOpenResultSchema);

/** What a freshly installed app says of its device, for the probabilistic match (when its owner turned it on). */
export const installDeviceSchema = z
  .object({
    osVersion: storableText()
      .trim()
      .min(1, 'must not be empty')
      .max(32)
      .meta({ description: 'The operating system version ("17.4.1"); compared by major and minor', example: '17.4.1' }),
    deviceFamily: z.enum(['phone', 'tablet']).meta({ description: 'Phone or tablet (an iPad, an Android tablet)' }),
    language: storableText()
      .trim()
      .min(1, 'must not be empty')
      .max(35)
      .meta({ description: 'The device\'s language or locale (BCP 47 or "en_US"); compared by its primary language', example: 'fr-CA' }),
    timeZone: storableText().trim().max(64).optional().meta({
      description: 'IANA time zone; accepted but not compared: the visit side does not know it',
      example: 'Europe/Paris',
    }),
    screen: z
      .object({ width: z.number().int().min(1).max(100_000), height: z.number().int().min(1).max(100_000) })
      .strict()
      .optional()
      .meta({ description: 'Screen size in points; accepted but not compared: the visit side does not know it' }),
  })
  .strict();
export type InstallDevice = z.infer<typeof installDeviceSchema>;

/** Text the app read from the store or the pasteboard: only searched for a token, never stored. */
const installSourceText = (description: string) =>
  storableText().max(MAX_URL_BYTES, `must be at most ${MAX_URL_BYTES} characters`).optional().meta({ description });

/** POST /app/install: what an app's first launch knows of how it was installed. */
export const appInstallBodySchema = z
  .object({
    installId: clientId.meta({
      description: 'An id the app makes up for this install and keeps (the same on every retry, the same on the next launch)',
      example: '9b2d7c1e-5f4a-4e37-a0c1-2b3d4e5f6a7b',
    }),
    referrer: installSourceText('Android: the Play Install Referrer string, as InstallReferrerClient gives it'),
    pasteboard: installSourceText('iOS: the URL the app read from the pasteboard (UIPasteControl)'),
    device: installDeviceSchema.optional(),
  })
  .strict();
export type AppInstallBody = z.infer<typeof appInstallBodySchema>;

/** How an install was matched to the visit that sent it to the store. */
export const INSTALL_MATCH_METHODS = ['install-referrer', 'pasteboard', 'fingerprint'] as const;
export type InstallMatchMethod = (typeof INSTALL_MATCH_METHODS)[number];

/** An install matched to a link: what /app/open answers for it, and how it was matched. */
export const appInstallMatchSchema = appOpenResultSchema
  .extend({
    matchedBy: z.enum(INSTALL_MATCH_METHODS).meta({
      description:
        "install-referrer: the Play referrer held the visit's token; pasteboard: the pasteboard URL did; fingerprint: the probabilistic match (when the app's owner turned it on)",
    }),
    confidence: z.number().min(0).max(1).optional().meta({
      description: "The fingerprint match's score (0..1), above the threshold; absent for a token match, which is certain",
      example: 0.82,
    }),
  })
  .meta({ id: 'AppInstallMatch' });
export type AppInstallMatch = z.infer<typeof appInstallMatchSchema>;

export const appInstallResultSchema = z
  .object({
    match: appInstallMatchSchema.nullable().meta({
      description: 'The link that brought this install, or null: no token, an unknown, expired or spent one, or no clear fingerprint match',
    }),
  })
  .meta({ id: 'AppInstallResult' });
export type AppInstallResult = z.infer<typeof appInstallResultSchema>;
export const appInstallResponseSchema = successEnvelope(appInstallResultSchema);
