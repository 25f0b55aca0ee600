import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Postgrator from 'postgrator';
import type { Sql } from './client.js';

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_LOCK_ID = 727274;

/** Applies every pending numbered SQL migration in db/migrations; returns the version reached. */
export async function migrate(sql: Sql, log: (line: string) => void = () => {}): Promise<number> {
  // One reserved connection, so the advisory lock and the migrations share a session and two
  // processes starting together cannot both apply the same migration.
  const connection = await sql.reserve();
  try {
    await connection`SELECT pg_advisory_lock(${MIGRATION_LOCK_ID})`;
    const postgrator = new Postgrator({
      migrationPattern: join(migrationsDir, '*'),
      driver: 'pg',
      schemaTable: 'schema_migrations',
      execQuery: async (query) => ({ rows: await connection.unsafe(query) }),
    });
    postgrator.on('migration-started', (m) => log(`applying migration ${m.version} ${m.name}`));
    await postgrator.migrate();
    return await postgrator.getDatabaseVersion();
  } finally {
    await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`.catch(() => {});
    connection.release();
  }
}
