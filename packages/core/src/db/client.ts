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
  const match = TIMESTAMP.exec(text);
  if (!match) return new Date(text);
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes, offsetSeconds] = match;
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), Math.floor(Number(fraction ?? 0) * 1000));
  const offset = (Number(offsetHours) * 3600 + Number(offsetMinutes ?? 0) * 60 + Number(offsetSeconds ?? 0)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offset : offset));
}
