import { invalidRequest, type LinkQrQuery } from '@deeplink/core';
import QRCode from 'qrcode';
import type { QrRenderPool } from './qr-render-pool.js';

export interface QrImage {
  contentType: 'image/svg+xml' | 'image/png';
  body: string | Buffer;
}

/** The largest logo accepted, in pixels a side: drawn at most a fifth of a 2048 px code, more is wasted. */
export const QR_LOGO_MAX_PIXELS = 1024;

/**
 * The square in the code's centre a logo covers, in modules, for a symbol of `modules` a side: a
 * fifth of its width (odd, so it sits centred on the module grid), which covers 4 % of the modules.
 * Error correction H restores 30 %, so the code reads with its finder patterns and most of its data
 * untouched. The logo is drawn inside it with a module of the background around it.
 */
export function logoBox(modules: number): { from: number; size: number } {
  let size = Math.max(3, Math.round(modules / 5));
  if (size % 2 !== modules % 2) size -= 1;
  return { from: (modules - size) / 2, size };
}

/** Where a logo came from, as the field an error names. */
export type LogoField = 'logo' | 'logoUrl';

/** Checks that `logo` is a PNG of acceptable dimensions, reading its header only (decoding is the render thread's). */
function checkLogo(logo: Buffer, field: LogoField): void {
  const isPng = logo.length > 24 && logo.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  if (!isPng) {
    throw invalidRequest('The logo is not a PNG image', [
      { field, message: field === 'logo' ? 'must be a PNG image in base64' : 'must be the address of a PNG image' },
    ]);
  }
  const width = logo.readUInt32BE(16);
  const height = logo.readUInt32BE(20);
  if (width === 0 || height === 0 || width > QR_LOGO_MAX_PIXELS || height > QR_LOGO_MAX_PIXELS) {
    throw invalidRequest('The logo is too large', [
      { field, message: `must be at most ${QR_LOGO_MAX_PIXELS} × ${QR_LOGO_MAX_PIXELS} px (it is ${width} × ${height})` },
    ]);
  }
}

/** The SVG's logo: a square of the background over the centre, the PNG inside it with a module of margin. */
function svgLogo(svg: string, logo: Buffer, margin: number, background: string): string {
  const side = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1]);
  const { from, size } = logoBox(side - 2 * margin);
  const at = margin + from;
  const image = `data:image/png;base64,${logo.toString('base64')}`;
  const drawn =
    `<rect x="${at}" y="${at}" width="${size}" height="${size}" fill="${background}"/>` +
    `<image x="${at + 1}" y="${at + 1}" width="${size - 2}" height="${size - 2}" href="${image}" preserveAspectRatio="xMidYMid meet"/>`;
  return svg.replace(/<\/svg>\s*$/, `${drawn}</svg>`);
}

/**
 * A QR code of `text` (a short URL) in the given colours. Error correction M (15 %): a phone still
 * reads a print that is a little worn, and a short URL stays in a small, coarse symbol that scans
 * from further away; with a logo in the centre, H (30 %). A PNG is drawn on one of `pool`'s threads;
 * an SVG costs the same at any size and is written here.
 */
export async function renderQrCode(
  text: string,
  { format, size, margin, color, background }: LinkQrQuery,
  pool: QrRenderPool,
  logo?: Buffer,
  logoField: LogoField = 'logo',
): Promise<QrImage> {
  if (logo) checkLogo(logo, logoField);
  const options = { errorCorrectionLevel: logo ? 'H' : 'M', margin, width: size, color: { dark: color, light: background } } as const;
  if (format === 'png') return { contentType: 'image/png', body: await pool.render(text, options, logo) };
  const svg = await QRCode.toString(text, { ...options, type: 'svg' });
  return { contentType: 'image/svg+xml', body: logo ? svgLogo(svg, logo, margin, background) : svg };
}
