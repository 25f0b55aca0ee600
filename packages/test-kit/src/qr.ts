import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

type Decode = typeof import('jsqr').default;
// jsqr is CommonJS with its function on `exports.default`: Node's ESM interop hands over the exports object.
const jsQR: Decode = (jsQRModule as unknown as { default?: Decode }).default ?? (jsQRModule as unknown as Decode);

/** Reads a PNG and returns its width and the text a QR reader finds in it (undefined if none). */
export function decodeQrPng(png: Buffer): { text: string | undefined; width: number } {
  const image = PNG.sync.read(png);
  return { text: jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data, width: image.width };
}
