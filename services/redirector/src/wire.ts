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
