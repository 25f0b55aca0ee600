// CSV files as the importer's sources write them, for the import tests.

/** Takeout's 29 headers, as a real export names them (the parameter in parentheses). */
export const TAKEOUT_HEADER = [
  'Short link',
  'Deep link (link)',
  'Android package name (apn)',
  'Android fallback link (afl)',
  'Android minimum package version code (amv)',
  'iOS bundle ID (ibi)',
  'iOS fallback link (ifl)',
  'iOS custom scheme (ius)',
  'iOS iPad fallback link (ipfl)',
  'iOS iPad bundle ID (ipbi)',
  'iOS app store ID (isi)',
  'iOS minimum version (imv)',
  'Enable forced redirect? (efr)',
  'Desktop fallback link (ofl)',
  'Social title (st)',
  'Social description (sd)',
  'Social image link (si)',
  'UTM source (utm_source)',
  'UTM medium (utm_medium)',
  'UTM campaign (utm_campaign)',
  'UTM term (utm_term)',
  'UTM content (utm_content)',
  'iTunes Connect at (at)',
  'iTunes Connect ct (ct)',
  'iTunes Connect mt (mt)',
  'iTunes Connect pt (pt)',
  'Archived?',
  'Link name',
  'Creation timestamp',
];

/** One CSV field, quoted when it holds a comma, a quote or a line break. */
const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
export const csv = (rows: readonly (readonly string[])[]) => `${rows.map((row) => row.map(field).join(',')).join('\r\n')}\r\n`;

/**
 * A Takeout row with every column filled: link `n`, at the short path `{prefix}{n}` (codes of the
 * default domain are shared by every account), its fields overridden by `overrides` (by header index).
 */
export function takeoutRow(n: number, prefix = 'fdl', overrides: Record<number, string> = {}): string[] {
  const row = [
    `https://example.page.link/${prefix}${n}`,
    `https://shop.example.com/item/${n}`,
    'com.example.shop',
    `https://shop.example.com/android/${n}`,
    '42',
    'com.example.shop',
    `https://shop.example.com/ios/${n}`,
    'exampleshop',
    `https://shop.example.com/ipad/${n}`,
    'com.example.shop.ipad',
    '123456789',
    '2.1',
    'FALSE',
    `https://shop.example.com/desktop/${n}`,
    `Item ${n}, "special"`,
    'The best item, now on sale',
    `https://shop.example.com/img/${n}.png`,
    'newsletter',
    'email',
    'spring',
    'shoes',
    'banner',
    'pt123',
    'campaign-token',
    '8',
    'provider',
    n % 10 === 0 ? 'TRUE' : 'FALSE',
    `Link number ${n}`,
    '2023-05-01 12:30:00',
  ];
  for (const [index, value] of Object.entries(overrides)) row[Number(index)] = value;
  return row;
}

/** A Takeout file of `count` rows (links {prefix}0 … {prefix}{count-1}). */
export const takeoutFile = (count: number, prefix?: string) =>
  csv([TAKEOUT_HEADER, ...Array.from({ length: count }, (_, n) => takeoutRow(n, prefix))]);
