import type { RecognizedString } from 'uws-bundled';
import { uwsImplementation } from './uws.js';

const encoder = new TextEncoder();
const native = uwsImplementation() === 'native';

/**
 * A text in the form uWebSockets.js writes fastest. The native addon copies bytes as they are but
 * converts a JS string to UTF-8 (with an allocation) on every call, so what is written on every
 * request is encoded once, here. The JS fallback stringifies whatever it gets: there, texts stay
 * strings.
 */
export function wire(text: string): RecognizedString {
  if (!native) return text;
  // An ArrayBuffer of its own rather than a view: the addon reaches its bytes in one step.
  const view = encoder.encode(text);
  return view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
}

/** Bytes a text of `wire` takes on the wire (for a HEAD answer's Content-Length). */
export const byteLength = (value: RecognizedString): number => (typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength);

/**
 * A text written with a different value in one slot each time: the bytes before and after the slot
 * are prepared once, and `fill` writes `value` (ASCII, exactly `slotLength` characters) into the
 * slot and returns the whole text, ready for the next write to uWebSockets.js. On the native addon
 * that is one buffer whose slot is overwritten in place, so a use allocates nothing: the addon
 * copies what it is given before the call returns. On the JS fallback it is a new string.
 */
export interface SlottedText {
  /** The text with its slot unfilled, for its length (every fill has the same). */
  readonly text: RecognizedString;
  fill(value: string): RecognizedString;
}

export function wireWithSlot(before: string, slotLength: number, after: string): SlottedText {
  const text = wire(before + '\0'.repeat(slotLength) + after);
  if (typeof text === 'string') return { text, fill: (value) => before + value + after };
  // A view of the same memory: writing the slot changes what `text` holds.
  const bytes = Buffer.from(text as ArrayBuffer);
  const at = Buffer.byteLength(before);
  return {
    text,
    fill(value) {
      bytes.write(value, at, slotLength, 'latin1');
      return text;
    },
  };
}
