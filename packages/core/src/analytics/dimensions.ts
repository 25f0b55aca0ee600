// The analytics dimensions, declared once. The worker's rollups, the reports, the exports, the
// response schemas (and so the OpenAPI document and the client's types) and the dashboard all read
// this object, so adding a dimension is one entry here, a migration if its values need one, and
// then whatever the compiler and test/dimensions.test.ts point at.
//
// No imports: the dashboard bundles this file (`@deeplink/core/dimensions`) as it is.

/** A dimension whose values are known in advance: each is always listed, zero when nothing was counted. */
interface FixedValues {
  readonly kind: 'fixed';
  /** Value as stored → its label for people and its column in the wide export. */
  readonly values: Readonly<Record<string, { readonly label: string; readonly wideColumn: string }>>;
}

/** A dimension with open-ended values: the largest few are listed, the rest added up under one label. */
interface TopValues {
  readonly kind: 'top';
  /** How many values a report (and the wide export, over the whole file) lists by name. */
  readonly limit: number;
  /** The label the other values are added up under. */
  readonly rest: string;
  /** Wide-export columns: `<prefix><value>` for the listed values, `<prefix><rest>` for the others. */
  readonly widePrefix: string;
}

export interface DimensionSpec {
  /** Key of the breakdown in the link report and the summary. */
  readonly response: string;
  /** Heading of the breakdown for people ("Platforms"). */
  readonly title: string;
  /** Name of one value's column in a breakdown's table ("Platform"). */
  readonly label: string;
  /** What the values are, for the response schema. */
  readonly description: string;
  /** Which values a breakdown lists, what the rest is called, and the wide export's columns. */
  readonly values: FixedValues | TopValues;
}

/** The label of the values a top-N breakdown does not list by name. */
export const OTHER = 'Other';

const top10 = (widePrefix: string) => ({ kind: 'top', limit: 10, rest: OTHER, widePrefix }) as const;

/**
 * Every dimension clicks are broken down by, in the order reports, exports and the dashboard list
 * them. The key is the name stored in the rollups' `dimension` column and the property of a
 * click's `dimensions` the worker fills in.
 */
export const DIMENSIONS = {
  platform: {
    response: 'platforms',
    title: 'Platforms',
    label: 'Platform',
    description: 'The routing platform: android, ios, desktop',
    values: {
      kind: 'fixed',
      values: {
        android: { label: 'Android', wideColumn: 'android' },
        ios: { label: 'iOS', wideColumn: 'ios' },
        desktop: { label: 'Desktop', wideColumn: 'desktop' },
      },
    },
  },
  country: {
    response: 'countries',
    title: 'Countries',
    label: 'Country',
    description: 'ISO country codes; Unknown where the address has no country',
    values: top10('country_'),
  },
  browser: {
    response: 'browsers',
    title: 'Browsers',
    label: 'Browser',
    description: 'Browser names (Chrome, Mobile Safari, Samsung Internet…); Unknown where the agent names none',
    values: top10('browser_'),
  },
  os: {
    response: 'os',
    title: 'Operating systems',
    label: 'Operating system',
    description: 'Operating system names (Windows, Android, iOS, Mac OS…); Unknown where the agent names none',
    values: top10('os_'),
  },
  device: {
    response: 'devices',
    title: 'Devices',
    label: 'Device',
    description: 'Mobile (phones, tablets, wearables), Desktop',
    values: {
      kind: 'fixed',
      values: { Mobile: { label: 'Mobile', wideColumn: 'mobile' }, Desktop: { label: 'Desktop', wideColumn: 'desktop_device' } },
    },
  },
  referrer: {
    response: 'referrers',
    title: 'Referrers',
    label: 'Referrer',
    description: 'Referring hosts; direct for visits without a referrer',
    values: top10('referrer_'),
  },
} as const satisfies Record<string, DimensionSpec>;

export type Dimensions = typeof DIMENSIONS;
/** The name of a dimension: `platform`, `country`, … */
export type DimensionName = keyof Dimensions;
/** The key of a dimension's breakdown in the responses: `platforms`, `countries`, … */
export type BreakdownKey = Dimensions[DimensionName]['response'];
/** The dimensions whose values are open-ended, folded into the top N. */
export type TopDimensionName = { [N in DimensionName]: Dimensions[N]['values']['kind'] extends 'top' ? N : never }[DimensionName];

/** Every dimension name, in the registry's order. */
export const DIMENSION_NAMES = Object.keys(DIMENSIONS) as DimensionName[];

/** The dimensions folded into the top N (their wide-export columns depend on the data). */
export const TOP_DIMENSION_NAMES = DIMENSION_NAMES.filter((name): name is TopDimensionName => DIMENSIONS[name].values.kind === 'top');

/** A report's breakdowns: per dimension, value label → clicks. */
export type Breakdowns = Record<BreakdownKey, Record<string, number>>;

/** One value per dimension, as a click carries them (a click's row in the rollup writer). */
export type DimensionValues = Record<DimensionName, string>;
