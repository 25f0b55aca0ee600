import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;
/** A piece of SQL (with its parameters) to embed in a query. */
export type Fragment = postgres.Fragment;

export interface DatabaseOptions {
  max?: number;
  /** Shown in pg_stat_activity, so a connection can be traced to its service. */
  applicationName?: string;
  /** How long opening a connection may take (postgres.js' default is 30 s). */
  connectTimeoutSeconds?: number;
}

/** Opens a postgres.js pool. Timestamps come back as Date, bigint counts as JS numbers. */
export function createDatabase(url: string, options: DatabaseOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    ...(options.connectTimeoutSeconds !== undefined && { connect_timeout: options.connectTimeoutSeconds }),
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'deeplink' },
    types: {
      // Click counts are bigint in SQL; any realistic total fits a double exactly.
      count: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) },
      timestamptz: { to: 1184, from: [1184], serialize: (value: Date) => new Date(value).toISOString(), parse: parseTimestamp },
    },
  });
}

const TIMESTAMP = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d+)?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/;

/**
 * PostgreSQL's text of a timestamptz (`0834-04-01 00:00:00+00`) as a Date. `new Date(text)` reads
 * years before 100 as 19xx or 20xx and some before 1000 not at all, while reports and exports take
 * any range from the year 1; anything else (`infinity`, BC) is left to it.
 */
export function parseTimestamp(text: string): Date {
  return parseUtcTimestamp(text) ?? parseAnyTimestamp(text);
}

/** Two ASCII digits at `at` as a number. */
const digits2 = (text: string, at: number) => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;

/**
 * The shape nearly every timestamp has in a UTC session, `2026-11-25 05:00:00[.ffffff]+00` with a
 * year from 1000, read digit by digit: a list of links reads several per row, and the regular
 * expression of parseAnyTimestamp costs about five times as much. Undefined for any other shape.
 */
function parseUtcTimestamp(text: string): Date | undefined {
  const end = text.length - 3;
  // A year of four digits not starting with 0, then the separators where they belong.
  if (end < 19 || text.charCodeAt(0) === 48 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return undefined;
  if (text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return undefined;
  if (text.charCodeAt(end) !== 43 || text.charCodeAt(end + 1) !== 48 || text.charCodeAt(end + 2) !== 48) return undefined;
  let ms = 0;
  if (end > 19) {
    if (text.charCodeAt(19) !== 46) return undefined;
    // Microseconds to whole milliseconds, truncated like the general parser: only the first three digits count.
    for (let at = 20, scale = 100; at < end; at++, scale /= 10) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) return undefined;
      if (scale >= 1) ms += digit * scale;
    }
  }
  const year = digits2(text, 0) * 100 + digits2(text, 2);
  return new Date(Date.UTC(year, digits2(text, 5) - 1, digits2(text, 8), digits2(text, 11), digits2(text, 14), digits2(text, 17), ms));
}

/** Any timestamp PostgreSQL writes, offsets of seconds and years before 1000 included. */
function parseAnyTimestamp(text: string): Date {
  const match = TIMESTAMP.exec(text);
  if (!match) return new Date(text);
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes, offsetSeconds] = match;
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), Math.floor(Number(fraction ?? 0) * 1000));
  const offset = (Number(offsetHours) * 3600 + Number(offsetMinutes ?? 0) * 60 + Number(offsetSeconds ?? 0)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offset : offset));
}
