import { z } from 'zod';
import { BUNDLE_ID, PACKAGE_NAME, SHA256_FINGERPRINT, TEAM_ID } from '../apps/association.js';
import { storableText, successEnvelope, timestampSchema } from './common.js';

const appName = storableText()
  .trim()
  .min(1, 'must not be empty')
  .max(100)
  .meta({ description: 'Shown on the iOS page ("Open in …")', example: 'Acme Shop' });

/** The probabilistic install match's window, in minutes (as the apps table's CHECK). */
export const FINGERPRINT_WINDOW_MINUTES = { min: 5, max: 1440, default: 120 } as const;

/** The app's probabilistic install match: off by default (see docs/app-integration.md). */
const fingerprintSettings = {
  fingerprintMatching: z.boolean().optional().meta({
    description:
      'Whether a first launch without an install token may be matched by device facts on the same network (probabilistic); off by default',
  }),
  fingerprintWindowMinutes: z
    .number()
    .int('must be a whole number of minutes')
    .min(FINGERPRINT_WINDOW_MINUTES.min)
    .max(FINGERPRINT_WINDOW_MINUTES.max)
    .optional()
    .meta({ description: 'How long after a store visit its install may still be matched by fingerprint; 120 by default', example: 120 }),
};

export const createIosAppBodySchema = z
  .object({
    platform: z.literal('ios'),
    name: appName.optional(),
    teamId: z.string().trim().regex(TEAM_ID, 'must be the 10-character Apple Developer team id').meta({ example: 'ABCDE12345' }),
    bundleId: z
      .string()
      .trim()
      .max(255)
      .regex(BUNDLE_ID, 'must be a bundle identifier such as com.example.app')
      .meta({ example: 'com.acme.shop' }),
    appStoreId: z
      .string()
      .trim()
      .regex(/^\d{1,15}$/, 'must be the numeric App Store id')
      .optional()
      .meta({ description: 'Visitors without the app go to its App Store page when a link has no iOS fallback', example: '1234567890' }),
    ...fingerprintSettings,
  })
  .strict();

export const createAndroidAppBodySchema = z
  .object({
    platform: z.literal('android'),
    name: appName.optional(),
    packageName: z
      .string()
      .trim()
      .max(255)
      .regex(PACKAGE_NAME, 'must be a package name such as com.example.app')
      .meta({ example: 'com.acme.shop' }),
    sha256CertFingerprints: z
      .array(z.string().trim().toUpperCase().regex(SHA256_FINGERPRINT, 'must be a SHA-256 fingerprint AA:BB:… (32 bytes)'))
      .min(1, 'must name at least one fingerprint')
      .max(10, 'must name at most 10 fingerprints')
      .transform((prints) => [...new Set(prints)])
      .meta({ description: "SHA-256 fingerprints of the app's signing certificates (keytool -list -v)" }),
    ...fingerprintSettings,
  })
  .strict();

/** POST /apps: an iOS or an Android app of the caller, told apart by `platform`. */
export const createAppBodySchema = z.discriminatedUnion('platform', [createIosAppBodySchema, createAndroidAppBodySchema], {
  error: 'platform must be ios or android',
});
export type CreateAppBody = z.input<typeof createAppBodySchema>;
export type CreateAppInput = z.output<typeof createAppBodySchema>;

/** PATCH /apps/{id}: the app's settings that may change after it is registered. */
export const updateAppBodySchema = z.object(fingerprintSettings).strict();
export type UpdateAppBody = z.infer<typeof updateAppBodySchema>;

export const appSchema = z
  .object({
    id: z.string(),
    platform: z.enum(['ios', 'android']),
    name: z.string().optional(),
    teamId: z.string().optional(),
    bundleId: z.string().optional(),
    appStoreId: z.string().optional(),
    packageName: z.string().optional(),
    sha256CertFingerprints: z.array(z.string()).optional(),
    keyPrefix: z.string().nullable().meta({
      description:
        "The first characters of the app's key, to tell keys apart; null while the app has none (apps registered before keys existed)",
      example: 'dla_Q2xpY2tz',
    }),
    keyCreatedAt: timestampSchema
      .nullable()
      .meta({ description: 'When the current key was created (or last rotated); null without a key' }),
    fingerprintMatching: z.boolean().meta({ description: 'Whether the probabilistic install match is on for this app' }),
    fingerprintWindowMinutes: z.number().int().meta({ description: 'The probabilistic match window, in minutes', example: 120 }),
    createdAt: timestampSchema,
  })
  .meta({ id: 'App' });
export type App = z.infer<typeof appSchema>;

/** An app with its key in full: only in the answers that create one (registering the app, rotating its key). */
export const appWithKeySchema = appSchema
  .extend({
    key: z.string().meta({
      description: 'The app key, publishable (safe to ship inside the app); returned only in this response',
      example: 'dla_Q2xpY2tzQW5kT3BlbnNBcmVDb3VudGVkSGVyZQ',
    }),
  })
  .meta({ id: 'AppWithKey' });
export type AppWithKey = z.infer<typeof appWithKeySchema>;

export const appResponseSchema = successEnvelope(z.object({ app: appSchema }));
export const appWithKeyResponseSchema = successEnvelope(z.object({ app: appWithKeySchema }));
export const appListResponseSchema = successEnvelope(z.object({ apps: z.array(appSchema) }));
