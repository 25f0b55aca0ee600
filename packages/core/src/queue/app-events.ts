/**
 * The app events a click batch carries beside its clicks, named as Firebase Dynamic Links named
 * them: a visit sent on to an app store (REDIRECT, from the redirector) and the opens an app
 * reports (APP_FIRST_OPEN, APP_RE_OPEN, from the API). APP_INSTALL has no producer yet: the
 * batches, rollups and reports take it, so that an install source can be added without a new format.
 */
export const APP_EVENT_NAMES = ['REDIRECT', 'APP_INSTALL', 'APP_FIRST_OPEN', 'APP_RE_OPEN'] as const;
export type AppEventName = (typeof APP_EVENT_NAMES)[number];

/** The platform of an app event: the visitor's for a REDIRECT, the app's for an open. */
export const APP_EVENT_PLATFORMS = ['ANDROID', 'IOS', 'DESKTOP', 'OTHER'] as const;
export type AppEventPlatform = (typeof APP_EVENT_PLATFORMS)[number];

/** One app event in a batch. */
export interface AppEvent {
  /**
   * What makes the event count once: the worker records the ids of events that came without a
   * click (opens), and a batch's own events count once with its batch id.
   */
  eventId: string;
  name: AppEventName;
  platform: AppEventPlatform;
  linkId: string;
  /** Epoch milliseconds when it happened (for a REDIRECT, the click's time). */
  ts: number;
}

const names: ReadonlySet<string> = new Set(APP_EVENT_NAMES);
const platforms: ReadonlySet<string> = new Set(APP_EVENT_PLATFORMS);
export const isAppEventName = (value: unknown): value is AppEventName => typeof value === 'string' && names.has(value);
export const isAppEventPlatform = (value: unknown): value is AppEventPlatform => typeof value === 'string' && platforms.has(value);

/** The id of the REDIRECT that came with click `clickIndex` of a batch: the same each time the batch is read. */
export const redirectEventId = (batchId: string, clickIndex: number): string => `${batchId}:${clickIndex}`;
