import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Postgrator from 'postgrator';
import type { Sql } from './client.js';

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_LOCK_ID = 727274;

/**
 * Applies every pending numbered SQL migration in db/migrations (or those up to `target`, such as
 * '002', which tests of a migration use to start from the schema before it); returns the version reached.
 */
export async function migrate(sql: Sql, log: (line: string) => void = () => {}, target?: string): Promise<number> {
  // Without its SQL files (a bundle copied without them) the migrator would report success on an
  // empty database; the service would then fail on its first query instead of at start.
  const files = (() => {
    try {
      return readdirSync(migrationsDir).filter((name) => name.endsWith('.sql'));
    } catch {
      return [];
    }
  })();
  if (files.length === 0) throw new Error(`no migrations found in ${migrationsDir}`);
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
    await postgrator.migrate(target);
    return await postgrator.getDatabaseVersion();
  } finally {
    await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`.catch(() => {});
    connection.release();
  }
}
