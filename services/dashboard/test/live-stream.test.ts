import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { followLiveStream, readMessage } from '../src/lib/live-stream.js';
import { addMessage, currentRate, EMPTY_TALLY, RECENT_CLICKS } from '../src/lib/live-tally.js';
import { createSseParser, MAX_SSE_LINE, type SseEvent } from '../src/lib/sse.js';

/** Every event and comment the parser reports for `chunks`, fed one after the other. */
function parse(chunks: string[]): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const parser = createSseParser(
    (event) => events.push(event),
    (comment) => comments.push(comment),
  );
  for (const chunk of chunks) parser.push(chunk);
  return { events, comments };
}

const click = (at: string) => ({ at, linkId: 'l1', platform: 'ios', country: 'DE', browser: 'Mobile Safari', os: 'iOS', referrer: 't.co' });

describe('the live stream reader', () => {
  it('reads events with their id, type and data, however the chunks are cut', () => {
    const stream = 'id: 1-0\nevent: clicks\ndata: {"a":1}\n\n: ping\n\nid: 2-0\r\nevent: clicks\r\ndata: {"a":\r\ndata: 2}\r\n\r\n';
    const whole = parse([stream]);
    expect(whole.events).toEqual([
      { id: '1-0', event: 'clicks', data: '{"a":1}' },
      { id: '2-0', event: 'clicks', data: '{"a":\n2}' },
    ]);
    expect(whole.comments).toEqual(['ping']);
    // Cut at every character, \r\n split in two included: the same events.
    expect(parse([...stream]).events).toEqual(whole.events);
  });

  it('keeps the last id for events without one, ignores unknown fields and events without data', () => {
    const { events } = parse(['id: 7\nevent: clicks\n\nretry: 10\nfoo: bar\ndata\n\n']);
    expect(events).toEqual([{ id: '7', event: 'message', data: '' }]);
  });

  it('gives up on a line longer than any message rather than buffering it', () => {
    const parser = createSseParser(() => {});
    expect(() => parser.push('x'.repeat(MAX_SSE_LINE + 1))).toThrow(/too long/);
  });

  it("reads a message's data and refuses what is not one", () => {
    const data = JSON.stringify({
      at: '2026-11-25T10:00:00.000Z',
      clicks: 2,
      perSecond: 0.2,
      recent: [click('2026-11-25T09:59:59.000Z')],
      extra: 1,
    });
    expect(readMessage('5-0', data)).toEqual({
      id: '5-0',
      at: '2026-11-25T10:00:00.000Z',
      clicks: 2,
      perSecond: 0.2,
      recent: [click('2026-11-25T09:59:59.000Z')],
    });
    expect(readMessage('5-0', 'not json')).toBeUndefined();
    expect(readMessage('5-0', '{"at":"x","clicks":"2","perSecond":0,"recent":[]}')).toBeUndefined();
    expect(readMessage('5-0', '{"at":"x","clicks":1,"perSecond":0,"recent":[null, 3]}')?.recent).toEqual([]);
  });
});

describe('the live tally', () => {
  const message = (clicks: number, perSecond: number, recent: ReturnType<typeof click>[]) => ({
    id: undefined,
    at: '2026-11-25T10:00:00.000Z',
    clicks,
    perSecond,
    recent,
  });

  it('counts every message, keeps the 20 last clicks newest first, and shows the rate while it is recent', () => {
    const older = Array.from({ length: 15 }, (_, index) => click(`2026-11-25T09:00:${String(index).padStart(2, '0')}.000Z`)).reverse();
    const newer = Array.from({ length: 10 }, (_, index) => click(`2026-11-25T09:01:${String(index).padStart(2, '0')}.000Z`)).reverse();
    let tally = addMessage(EMPTY_TALLY, message(15, 1.5, older), 1_000);
    tally = addMessage(tally, message(10, 2.5, newer), 2_000);
    expect(tally.clicks).toBe(25);
    expect(tally.recent).toHaveLength(RECENT_CLICKS);
    expect(tally.recent[0]).toEqual(newer[0]);
    expect(tally.recent[10]).toEqual(older[0]);
    expect(currentRate(tally, 2_500)).toBe(2.5);
    expect(currentRate(tally, 12_000)).toBe(0);
  });
});

describe('following the live stream', () => {
  /** An HTTP server speaking the stream's protocol: each connection answered by `answer`, the Last-Event-ID of each recorded. */
  async function serve(answer: (connection: number, response: ServerResponse) => void) {
    const lastEventIds: (string | undefined)[] = [];
    const server = createServer((request, response) => {
      lastEventIds.push(request.headers['last-event-id'] as string | undefined);
      answer(lastEventIds.length, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/live`,
      lastEventIds,
      close: () =>
        new Promise((resolve) => {
          server.close(resolve);
          server.closeAllConnections();
        }),
    };
  }
  const data = (clicks: number) => JSON.stringify({ at: new Date().toISOString(), clicks, perSecond: clicks / 10, recent: [] });

  it('reconnects after a dropped connection with Last-Event-ID, waits out a 429, and stops on a 404', async () => {
    const server = await serve((connection, response) => {
      if (connection === 2) {
        response.writeHead(429, { 'retry-after': '0.2', 'content-type': 'application/json' });
        return response.end(
          JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'Too many live views', details: [] } }),
        );
      }
      if (connection === 4) {
        response.writeHead(404, { 'content-type': 'application/json' });
        return response.end(JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'Link not found', details: [] } }));
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const message = `: ping\n\nid: ${connection}-0\nevent: clicks\ndata: ${data(connection)}\n\n`;
      // Cut mid-message, then closed: the reader joins the halves, then reconnects.
      response.write(message.slice(0, 20));
      setTimeout(() => response.end(message.slice(20)), 20);
    });
    const states: string[] = [];
    const clicks: number[] = [];
    await followLiveStream({
      url: server.url,
      token: () => 'token',
      signal: new AbortController().signal,
      onMessage: (message) => clicks.push(message.clicks),
      onState: (state) => states.push('reason' in state ? `${state.kind}: ${state.reason}` : state.kind),
      onUnauthorized: () => states.push('unauthorized'),
      timing: { firstRetryMs: 10 },
    });
    await server.close();
    expect(clicks).toEqual([1, 3]);
    expect(server.lastEventIds).toEqual([undefined, '1-0', '1-0', '3-0']);
    expect(states).toEqual([
      'connecting',
      'live',
      'waiting: The live view was closed.',
      'connecting',
      'waiting: Too many live views',
      'connecting',
      'live',
      'waiting: The live view was closed.',
      'connecting',
      'stopped: Link not found',
    ]);
  });

  it('drops a connection that falls silent and makes it again; stops at once when told to', async () => {
    const server = await serve((_connection, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': ping\n\n');
    });
    const controller = new AbortController();
    const states: string[] = [];
    const following = followLiveStream({
      url: server.url,
      token: () => undefined,
      signal: controller.signal,
      onMessage: () => {},
      onState: (state) => {
        states.push('reason' in state ? `${state.kind}: ${state.reason}` : state.kind);
        if (states.length === 4) controller.abort();
      },
      onUnauthorized: () => {},
      timing: { silenceMs: 100, firstRetryMs: 10 },
    });
    await following;
    await server.close();
    expect(states).toEqual(['connecting', 'live', 'waiting: The live view went silent.', 'connecting']);
  });
});
