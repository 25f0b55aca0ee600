import type { LiveClick, LiveMessage } from './live-stream.js';

/** How many of the last clicks the live panel lists. */
export const RECENT_CLICKS = 20;
/** The window the API's clicks per second cover: a rate older than this no longer says anything. */
const RATE_WINDOW_MS = 10_000;

/** What the live panel shows: the clicks since it opened, the latest rate, and the last clicks, newest first. */
export interface LiveTally {
  clicks: number;
  perSecond: number;
  /** When the rate arrived (ms since the epoch, the browser's clock). */
  perSecondAt: number;
  recent: LiveClick[];
}

export const EMPTY_TALLY: LiveTally = { clicks: 0, perSecond: 0, perSecondAt: 0, recent: [] };

/** The tally after one message arrived at `now`. */
export function addMessage(tally: LiveTally, message: LiveMessage, now: number): LiveTally {
  return {
    clicks: tally.clicks + message.clicks,
    perSecond: message.perSecond,
    perSecondAt: now,
    recent: [...message.recent, ...tally.recent].slice(0, RECENT_CLICKS),
  };
}

/** The clicks per second to show at `now`: the last rate while it is recent, 0 once no batch came for its whole window. */
export const currentRate = (tally: LiveTally, now: number): number => (now - tally.perSecondAt < RATE_WINDOW_MS ? tally.perSecond : 0);
