import { z } from 'zod';

/** Image formats of a link's QR code. */
export const QR_FORMATS = ['svg', 'png'] as const;
export type QrFormat = (typeof QR_FORMATS)[number];

/** Bounds of the QR image's width in pixels: large enough for print, small enough to render cheaply. */
export const QR_SIZE = { min: 64, max: 2048, default: 512 } as const;
/** Bounds of the quiet zone, in modules; the QR standard asks for 4. */
export const QR_MARGIN = { min: 0, max: 16, default: 4 } as const;

const boundedInt = (bounds: { min: number; max: number; default: number }, description: string) =>
  z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(bounds.min, `must be between ${bounds.min} and ${bounds.max}`)
    .max(bounds.max, `must be between ${bounds.min} and ${bounds.max}`)
    .default(bounds.default)
    .meta({ description, example: bounds.default });

export const linkQrQuerySchema = z
  .object({
    format: z
      .enum(QR_FORMATS, { error: `must be one of ${QR_FORMATS.join(', ')}` })
      .default('svg')
      .meta({ description: 'svg (scalable, for screens and print) or png', example: 'svg' }),
    size: boundedInt(QR_SIZE, `Width and height in pixels, ${QR_SIZE.min}-${QR_SIZE.max}`),
    margin: boundedInt(QR_MARGIN, `Quiet zone around the code, in modules, ${QR_MARGIN.min}-${QR_MARGIN.max}`),
  })
  .strict();
export type LinkQrQuery = z.infer<typeof linkQrQuerySchema>;
