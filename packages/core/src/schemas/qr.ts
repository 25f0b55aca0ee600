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

/** A colour as six hex digits, with or without `#` (`#` must be written %23 in a query). */
const hexColor = (description: string, fallback: string) =>
  z
    .string()
    .regex(/^#?[0-9a-fA-F]{6}$/, 'must be a colour as six hex digits, like #1a2b3c')
    .transform((value) => `#${value.replace('#', '').toLowerCase()}`)
    .default(fallback)
    .meta({ description, example: fallback });

/** The options of every QR image: format, size, quiet zone and colours. */
const qrStyle = {
  format: z
    .enum(QR_FORMATS, { error: `must be one of ${QR_FORMATS.join(', ')}` })
    .default('svg')
    .meta({ description: 'svg (scalable, for screens and print) or png', example: 'svg' }),
  size: boundedInt(QR_SIZE, `Width and height in pixels, ${QR_SIZE.min}-${QR_SIZE.max}`),
  margin: boundedInt(QR_MARGIN, `Quiet zone around the code, in modules, ${QR_MARGIN.min}-${QR_MARGIN.max}`),
  color: hexColor("The modules' colour: darker than the background, with a contrast of at least 3:1", '#000000'),
  background: hexColor("The background's colour (quiet zone included)", '#ffffff'),
};

/** WCAG's relative luminance of a `#rrggbb` colour, 0 (black) to 1 (white). */
function luminance(hex: string): number {
  const channel = (at: number) => {
    const value = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** The contrast of two colours, 1 to 21, as WCAG computes it. */
export const contrastRatio = (a: string, b: string): number => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
};

/**
 * Phone cameras read dark modules on a light background: inverted codes fail in many readers,
 * and pale ones in poor light. Both are refused with the field to change.
 */
function readableColours({ color, background }: { color: string; background: string }, context: z.RefinementCtx): void {
  if (luminance(color) >= luminance(background)) {
    context.addIssue({
      code: 'custom',
      path: ['color'],
      message: 'must be darker than the background: many readers cannot read inverted codes',
    });
  } else if (contrastRatio(color, background) < 3) {
    context.addIssue({
      code: 'custom',
      path: ['color'],
      message: `has a contrast of ${contrastRatio(color, background).toFixed(1)}:1 with the background; at least 3:1 reads reliably`,
    });
  }
}

export const linkQrQuerySchema = z.object(qrStyle).strict().superRefine(readableColours);
export type LinkQrQuery = z.infer<typeof linkQrQuerySchema>;

/** The largest logo accepted, decoded: a logo is drawn at most a fifth of the code's width. */
export const QR_LOGO_MAX_BYTES = 256 * 1024;

/** POST /links/:id/qr: the same options in a JSON body, plus a logo drawn in the centre. */
export const linkQrRenderSchema = z
  .object({
    ...qrStyle,
    logo: z
      .base64({ error: 'must be a PNG image in base64' })
      .max(Math.ceil(QR_LOGO_MAX_BYTES / 3) * 4, `must be at most ${QR_LOGO_MAX_BYTES / 1024} KiB (before base64)`)
      .optional()
      .meta({
        description:
          "A PNG image (base64, at most 256 KiB, at most 1024 × 1024 px) drawn in the centre over a fifth of the code's width, " +
          'on the background colour. With a logo the code uses error correction H (30 %), so it still reads with the centre covered',
        example: 'iVBORw0KGgo…',
      }),
    logoUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http or https address' })
      .max(2048, 'must be at most 2048 characters')
      .refine((url) => !/^[a-z]+:\/\/[^/]*@/i.test(url), 'must not hold a user name or password')
      .optional()
      .meta({
        description:
          "Where to fetch the logo instead (your app's icon, say): a PNG on the public internet, with the same limits as `logo`. " +
          'Fetched by the server (at most 5 s, 3 redirects) and kept for 10 minutes; addresses on private networks are refused',
        example: 'https://example.com/app-icon.png',
      }),
  })
  .strict()
  .superRefine(readableColours)
  .refine((body) => body.logo === undefined || body.logoUrl === undefined, {
    path: ['logoUrl'],
    message: 'give either logo or logoUrl, not both',
  });
export type LinkQrRender = z.infer<typeof linkQrRenderSchema>;
