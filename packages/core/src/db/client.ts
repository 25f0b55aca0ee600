import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

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
    },
  });
}
