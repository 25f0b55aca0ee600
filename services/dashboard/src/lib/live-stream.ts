import type { LiveClick } from '@deeplink/core/redis';
import { createSseParser } from './sse.js';

/** One click as the live stream shows it: never an address, agent string or visitor hash (the wire format's own type). */
export type { LiveClick };

/** One `clicks` message: the clicks of the scope in one batch the worker committed. */
export interface LiveMessage {
  id: string | undefined;
  /** When the batch was committed (ISO). */
  at: string;
  clicks: number;
  /** The scope's clicks per second over the 10 s before `at`. */
  perSecond: number;
  /** At most 20 of the batch's clicks, newest first. */
  recent: LiveClick[];
}

/** Where the stream is: connecting, reading, waiting to reconnect, or stopped for good (with why). */
export type LiveState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  | { kind: 'waiting'; reason: string; retryInMs: number }
  | { kind: 'stopped'; reason: string };

export interface LiveStreamOptions {
  /** The stream's address (`/api/analytics/live`, `/api/analytics/links/:id/live`). */
  url: string;
  /** The login token, sent as `Authorization: Bearer` (EventSource cannot send it: hence fetch). */
  token: () => string | undefined;
  /** The id of the last message already shown, to resume after. */
  lastEventId?: string;
  onMessage: (message: LiveMessage) => void;
  onState: (state: LiveState) => void;
  /** Called on a 401: the token is no longer good. */
  onUnauthorized: () => void;
  /** Ends the stream for good (the page was left or hidden). */
  signal: AbortSignal;
  /** Waits between attempts; the defaults below unless a test passes shorter ones. */
  timing?: Partial<typeof TIMING>;
}

export const TIMING = {
  /** The server sends `: ping` every 15 s: silence for this long means the connection is gone. */
  silenceMs: 45_000,
  firstRetryMs: 1_000,
  maxRetryMs: 30_000,
};

/** Statuses that will not change by trying again: the stream stops and says why. */
const FINAL = new Map([
  [400, 'The live view was refused.'],
  [403, 'This account may not see the live view.'],
  [404, 'This link is gone.'],
]);

/**
 * Reads the live stream until `signal` aborts: with fetch and a stream reader, reconnecting after
 * a dropped connection (waiting longer each time, up to 30 s, or as long as a 429's Retry-After
 * says) with `Last-Event-ID`, so the messages missed meanwhile arrive first. Resolves when it stops.
 */
export async function followLiveStream(options: LiveStreamOptions): Promise<void> {
  const timing = { ...TIMING, ...options.timing };
  let lastEventId = options.lastEventId;
  let retryMs = timing.firstRetryMs;
  while (!options.signal.aborted) {
    options.onState({ kind: 'connecting' });
    const outcome = await readOnce(options, lastEventId, timing.silenceMs, (message) => {
      lastEventId = message.id ?? lastEventId;
      retryMs = timing.firstRetryMs;
      options.onMessage(message);
    });
    if (options.signal.aborted) return;
    if (outcome.kind === 'stop') {
      options.onState({ kind: 'stopped', reason: outcome.reason });
      return;
    }
    const wait = outcome.retryAfterMs ?? retryMs;
    retryMs = Math.min(timing.maxRetryMs, retryMs * 2);
    options.onState({ kind: 'waiting', reason: outcome.reason, retryInMs: wait });
    await pause(wait, options.signal);
  }
}

type Outcome = { kind: 'stop'; reason: string } | { kind: 'retry'; reason: string; retryAfterMs?: number };

/** One connection: its messages to `deliver`, until it ends, falls silent or fails. */
async function readOnce(
  options: LiveStreamOptions,
  lastEventId: string | undefined,
  silenceMs: number,
  deliver: (message: LiveMessage) => void,
): Promise<Outcome> {
  const connection = new AbortController();
  const stop = () => connection.abort();
  options.signal.addEventListener('abort', stop, { once: true });
  // Told to stop before this connection began (the page hidden meanwhile): it never opens.
  if (options.signal.aborted) stop();
  let silence = setTimeout(stop, silenceMs);
  const heard = () => {
    clearTimeout(silence);
    silence = setTimeout(stop, silenceMs);
  };
  try {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    const token = options.token();
    if (token) headers.authorization = `Bearer ${token}`;
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const response = await fetch(options.url, { headers, signal: connection.signal, cache: 'no-store' });
    if (response.status === 401) {
      options.onUnauthorized();
      return { kind: 'stop', reason: 'Signed out.' };
    }
    const final = FINAL.get(response.status);
    if (final) return { kind: 'stop', reason: await errorMessage(response, final) };
    if (response.status === 429) {
      const seconds = Number(response.headers.get('retry-after'));
      return {
        kind: 'retry',
        reason: await errorMessage(response, 'Too many live views are open.'),
        retryAfterMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined,
      };
    }
    if (!response.ok || !response.body) return { kind: 'retry', reason: `The live view answered HTTP ${response.status}.` };
    options.onState({ kind: 'live' });
    const parser = createSseParser((event) => {
      heard();
      if (event.event !== 'clicks') return;
      const message = readMessage(event.id, event.data);
      if (message) deliver(message);
    }, heard);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { kind: 'retry', reason: 'The live view was closed.' };
      heard();
      parser.push(value);
    }
  } catch (error) {
    return { kind: 'retry', reason: connection.signal.aborted ? 'The live view went silent.' : describe(error) };
  } finally {
    clearTimeout(silence);
    options.signal.removeEventListener('abort', stop);
    connection.abort();
  }
}

/** A `clicks` message's data, or undefined when it is not one (a newer server's field is ignored, a missing one is not). */
export function readMessage(id: string | undefined, data: string): LiveMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { at, clicks, perSecond, recent } = parsed as Record<string, unknown>;
  if (typeof at !== 'string' || typeof clicks !== 'number' || typeof perSecond !== 'number' || !Array.isArray(recent)) return undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    id,
    at,
    clicks,
    perSecond,
    recent: recent
      .filter((click): click is Record<string, unknown> => typeof click === 'object' && click !== null)
      .slice(0, 20)
      .map((click) => ({
        at: text(click.at),
        linkId: text(click.linkId),
        platform: text(click.platform),
        country: text(click.country),
        browser: text(click.browser),
        os: text(click.os),
        referrer: text(click.referrer),
      })),
  };
}

/** The API's error message from its envelope, or `fallback`. */
async function errorMessage(response: Response, fallback: string): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { message?: unknown } };
    return typeof body.error?.message === 'string' ? body.error.message : fallback;
  } catch {
    return fallback;
  }
}

const describe = (error: unknown) => `The live view lost its connection (${error instanceof Error ? error.message : String(error)}).`;

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
