import type { LinkQrQuery } from '@deeplink/core';
import QRCode from 'qrcode';
import type { QrRenderPool } from './qr-render-pool.js';

export interface QrImage {
  contentType: 'image/svg+xml' | 'image/png';
  body: string | Buffer;
}

/**
 * A QR code of `text` (a short URL). Error correction M (15 %): a phone still reads a print that is
 * a little worn, and a short URL stays in a small, coarse symbol that scans from further away.
 * A PNG is drawn on one of `pool`'s threads; an SVG costs the same at any size and is written here.
 */
export async function renderQrCode(text: string, { format, size, margin }: LinkQrQuery, pool: QrRenderPool): Promise<QrImage> {
  const options = { errorCorrectionLevel: 'M', margin, width: size } as const;
  if (format === 'png') return { contentType: 'image/png', body: await pool.render(text, options) };
  return { contentType: 'image/svg+xml', body: await QRCode.toString(text, { ...options, type: 'svg' }) };
}
