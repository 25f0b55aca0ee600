/** One Server-Sent Event as the stream delivers it. */
export interface SseEvent {
  /** The last `id:` seen on the stream (it carries over to later events, as EventSource's does). */
  id: string | undefined;
  event: string;
  data: string;
}

/** A line longer than this is not a line of the API's stream: the reader gives up rather than buffering it. */
export const MAX_SSE_LINE = 256 * 1024;

/**
 * A parser for the text/event-stream format, fed the decoded text as it arrives, in chunks cut
 * anywhere (within a line, between `\r` and `\n`). It calls `onEvent` at each blank line that ends
 * an event with data, and `onComment` for comment lines (`: ping`), which say the connection is
 * alive. Follows the HTML standard's rules: `data:` lines are joined with newlines, one space after
 * the colon is dropped, unknown fields are ignored.
 */
export function createSseParser(onEvent: (event: SseEvent) => void, onComment: (text: string) => void = () => {}) {
  let buffer = '';
  let lastId: string | undefined;
  let eventType = '';
  let data: string[] = [];

  const dispatch = () => {
    if (data.length > 0) onEvent({ id: lastId, event: eventType || 'message', data: data.join('\n') });
    eventType = '';
    data = [];
  };

  const line = (text: string) => {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return onComment(text.slice(1).trimStart());
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  };

  return {
    /** Feeds decoded text; throws when a line outgrows MAX_SSE_LINE. */
    push(chunk: string): void {
      buffer += chunk;
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A trailing \r may be the first half of \r\n: wait for the next chunk to tell.
        if (end === -1 || (end === buffer.length - 1 && buffer.endsWith('\r'))) break;
        const breakLength = buffer.startsWith('\r\n', end) ? 2 : 1;
        line(buffer.slice(0, end));
        buffer = buffer.slice(end + breakLength);
      }
      if (buffer.length > MAX_SSE_LINE) throw new Error('the live stream sent a line too long to be one of its messages');
    },
    /** The id to resume after (`Last-Event-ID`). */
    get lastEventId(): string | undefined {
      return lastId;
    },
  };
}
