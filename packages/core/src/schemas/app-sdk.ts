import { z } from 'zod';
import { successEnvelope, webUrlSchema } from './common.js';

/** The header an app sends its publishable app key in. */
export const APP_KEY_HEADER = 'x-app-key';

/** POST /app/open: the URL an app was opened with (a Universal Link or an App Link). */
export const appOpenBodySchema = z
  .object({
    url: webUrlSchema.meta({
      description: 'The short URL the app was opened with, on the default short domain or a custom one, query string included',
      example: 'https://go.acme.com/spring',
    }),
    openId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8-64 letters, digits, "-" or "_" (a UUID fits)')
      .optional()
      .meta({ description: 'An id the app makes up for this open, the same on retries', example: '3f0c9a52-0c1e-4b8e-9d7a-1f2e3d4c5b6a' }),
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
