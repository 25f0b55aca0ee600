// A reader of the live click streams for tests: a real HTTP request to a listening API, its
// Server-Sent Events collected as they arrive.
import { type LiveClicksMessage, readEventStream } from '@deeplink/core';
import { waitUntil } from '@deeplink/test-kit/processes';

export interface LiveMessage {
  id: string;
  event: string;
  /** The data line as sent. */
  raw: string;
  data: LiveClicksMessage;
}

export interface OpenedStream {
  response: Response;
  messages: LiveMessage[];
  comments: string[];
  /** True once the server ended the stream (or the connection broke). */
  ended(): boolean;
  /** Resolves once `count` messages have arrived; throws after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs?: number): Promise<LiveMessage[]>;
  close(): void;
}

/** Opens `path` on `base` with the token (and Last-Event-ID); a refused stream's body is read whole. */
export async function openLiveStream(base: string, path: string, token: string, lastEventId?: string): Promise<OpenedStream> {
  const controller = new AbortController();
  const response = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${token}`, ...(lastEventId !== undefined && { 'last-event-id': lastEventId }) },
    signal: controller.signal,
  });
  const messages: LiveMessage[] = [];
  const comments: string[] = [];
  let ended = !response.ok;
  if (response.ok && response.body) {
    void (async () => {
      try {
        for await (const item of readEventStream(response.body as unknown as AsyncIterable<Uint8Array>)) {
          if ('comment' in item) comments.push(item.comment);
          else messages.push({ id: item.id ?? '', event: item.event, raw: item.data, data: JSON.parse(item.data) });
        }
      } catch {
        // Aborted by close(), or the connection broke: ended either way.
      }
      ended = true;
    })();
  }
  return {
    response,
    messages,
    comments,
    ended: () => ended,
    async waitForMessages(count, timeoutMs = 10_000) {
      await waitUntil(() => messages.length >= count, timeoutMs, { intervalMs: 10, failure: `${count} live messages` });
      return messages.slice(0, count);
    },
    close: () => controller.abort(),
  };
}
