import { performance } from 'node:perf_hooks';
import { readEventStream } from '@deeplink/core';

/** A link's live stream, open before its click: resolves when the first message arrives. */
export interface LiveWaiter {
  /** performance.now() when the stream's first clicks message arrived; rejects when the stream ends without one. */
  arrived: Promise<number>;
  close(): void;
}

/**
 * Opens the link's live stream (GET /api/analytics/links/:id/live) and resolves once it answered,
 * so a click sent afterwards is one the stream carries.
 */
export async function openLiveWaiter(apiUrl: string, token: string, linkId: string): Promise<LiveWaiter> {
  const controller = new AbortController();
  const response = await fetch(`${apiUrl}/api/analytics/links/${linkId}/live`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (!response.ok || !response.body) throw new Error(`live stream of ${linkId} answered ${response.status}`);
  const body = response.body as unknown as AsyncIterable<Uint8Array>;
  const arrived = (async () => {
    for await (const item of readEventStream(body)) if ('event' in item && item.event === 'clicks') return performance.now();
    throw new Error(`live stream of ${linkId} ended without a message`);
  })();
  arrived.catch(() => {});
  return { arrived, close: () => controller.abort() };
}
