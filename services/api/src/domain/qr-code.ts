import type { LinkQrQuery } from '@deeplink/core';
import QRCode from 'qrcode';

export interface QrImage {
  contentType: 'image/svg+xml' | 'image/png';
  body: string | Buffer;
}

/**
 * A QR code of `text` (a short URL). Error correction M (15 %): a phone still reads a print that is
 * a little worn, and a short URL stays in a small, coarse symbol that scans from further away.
 */
export async function renderQrCode(text: string, { format, size, margin }: LinkQrQuery): Promise<QrImage> {
  const options = { errorCorrectionLevel: 'M', margin, width: size } as const;
  if (format === 'png') return { contentType: 'image/png', body: await QRCode.toBuffer(text, { ...options, type: 'png' }) };
  return { contentType: 'image/svg+xml', body: await QRCode.toString(text, { ...options, type: 'svg' }) };
}
