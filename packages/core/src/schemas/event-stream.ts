/** One block of a Server-Sent Events stream: a message, or a comment (`: ping`). */
export type EventStreamItem = { id?: string; event: string; data: string } | { comment: string };

/**
 * The messages and comments of a text/event-stream body as they arrive (the parts of the format
 * the live streams use: id, event, data and comments; `retry` is ignored). For readers that cannot
 * use EventSource, which sends no Authorization header.
 */
export async function* readEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventStreamItem> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const item = parseBlock(block);
      if (item) yield item;
    }
  }
}

function parseBlock(block: string): EventStreamItem | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  const comments: string[] = [];
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) {
      comments.push(line.slice(1).trimStart());
      continue;
    }
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length > 0) return { ...(id !== undefined && { id }), event, data: data.join('\n') };
  return comments.length > 0 ? { comment: comments.join('\n') } : undefined;
}
