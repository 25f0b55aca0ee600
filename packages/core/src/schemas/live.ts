import { z } from 'zod';

/** The newest clicks one message lists. */
export const LIVE_RECENT_CLICKS = 20;

/** One click of a live message: the values the reports' breakdowns are built from, nothing about the visitor. */
export const liveClickSchema = z
  .object({
    at: z.string().meta({ description: 'When the click happened (ISO 8601)', example: '2026-11-25T12:00:01.250Z' }),
    linkId: z.string().meta({ description: 'The link clicked', example: '6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10' }),
    platform: z.string().meta({ description: 'The routing platform as stored: android, ios or desktop', example: 'ios' }),
    country: z.string().meta({ description: 'ISO country code, or Unknown', example: 'DE' }),
    browser: z.string().meta({ description: 'Browser name, or Unknown', example: 'Mobile Safari' }),
    os: z.string().meta({ description: 'Operating system name, or Unknown', example: 'iOS' }),
    referrer: z.string().meta({ description: 'Referring host, or direct', example: 't.co' }),
  })
  .meta({ id: 'LiveClick' });
export type LiveClickMessage = z.infer<typeof liveClickSchema>;

/** The data of one `clicks` event of a live stream. */
export const liveClicksMessageSchema = z
  .object({
    at: z.string().meta({ description: 'When the worker committed these clicks (ISO 8601)', example: '2026-11-25T12:00:01.400Z' }),
    clicks: z.number().int().min(1).meta({ description: "The stream's clicks (the account's, or the link's) in that commit" }),
    perSecond: z.number().min(0).meta({ description: "The stream's clicks per second over the last 10 seconds, to one decimal" }),
    recent: z
      .array(liveClickSchema)
      .max(LIVE_RECENT_CLICKS)
      .meta({ description: `The newest of those clicks, newest first, at most ${LIVE_RECENT_CLICKS}` }),
  })
  .meta({ id: 'LiveClicks' });
export type LiveClicksMessage = z.infer<typeof liveClicksMessageSchema>;
