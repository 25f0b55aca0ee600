/**
 * The app events a click batch carries beside its clicks, named as Firebase Dynamic Links named
 * them: a visit sent on to an app store (REDIRECT, from the redirector), and what an app reports
 * through the API: an attributed install (APP_INSTALL) and its opens (APP_FIRST_OPEN, APP_RE_OPEN).
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
  /**
   * Who the event counts as one of in its unique count: a hash, never an address or an id as the
   * app sent it (the API's installVisitor for an open or install that names its install). Absent,
   * the worker counts the event as its click's visitor (a REDIRECT: the click's visitor hash) or,
   * without a click, as its own id (an open that names no install).
   */
  visitor?: string;
  /** On a REDIRECT to an app store that handed the visitor an install token: what attributes the install. */
  install?: InstallClick;
  /**
   * For an event that came with a click (a REDIRECT), the index of that click in its batch: the
   * worker reads the click's address and agent there for install attribution, and derives the
   * event's id from it (redirectEventId). Undefined for an event with an id of its own.
   */
  clickIndex?: number;
}

/**
 * What a store REDIRECT hands on for install attribution: the single-use token the store URL
 * carries (Android's Play `referrer`) or the iOS page copies to the pasteboard, and the visitor's
 * language (Accept-Language's first tag) for the optional fingerprint match. The worker stores the
 * token hashed (install_clicks), never as sent.
 */
export interface InstallClick {
  token: string;
  language?: string;
}

const names: ReadonlySet<string> = new Set(APP_EVENT_NAMES);
const platforms: ReadonlySet<string> = new Set(APP_EVENT_PLATFORMS);
export const isAppEventName = (value: unknown): value is AppEventName => typeof value === 'string' && names.has(value);
export const isAppEventPlatform = (value: unknown): value is AppEventPlatform => typeof value === 'string' && platforms.has(value);

/** The id of the REDIRECT that came with click `clickIndex` of a batch: the same each time the batch is read. */
export const redirectEventId = (batchId: string, clickIndex: number): string => `${batchId}:${clickIndex}`;
