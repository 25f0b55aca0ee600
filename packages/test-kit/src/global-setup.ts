import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, migrate } from '@deeplink/core/db';
import { buildBundles, buildDashboard, SERVICES } from '../../../scripts/build.mjs';
import { ensureServices } from '../../../scripts/services.mjs';
import { adminUrl, baseDatabaseUrl, databaseUrl } from './urls.js';

const migrationsDir = join(import.meta.dirname, '../../core/src/db/migrations');

/** Named after the migrations' content, so concurrent runs share it and a changed migration gets a new one. */
function templateName(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(migrationsDir).sort()) hash.update(file).update(readFileSync(join(migrationsDir, file)));
  return `deeplink_test_tpl_${hash.digest('hex').slice(0, 12)}`;
}

/**
 * Brings Redis and PostgreSQL up, builds the services' bundles and the dashboard, then makes sure a migrated template database exists that each
 * test file clones (CREATE DATABASE … TEMPLATE is a file copy: far faster than migrating).
 */
export default async function setup(): Promise<void> {
  await ensureServices({ databaseUrl: baseDatabaseUrl() });
  // Service processes start from their bundles, as in production (see spawnProcess); the API serves
  // the dashboard's build (the browser tests use it). Both skip what has not changed.
  await buildBundles(SERVICES);
  await buildDashboard();
  const template = templateName();
  process.env.DEEPLINK_TEST_TEMPLATE = template;
  const admin = createDatabase(adminUrl(), { max: 1 });
  const connection = await admin.reserve();
  try {
    await connection`SELECT pg_advisory_lock(727275)`;
    const [exists] = await connection`SELECT 1 FROM pg_database WHERE datname = ${template}`;
    if (!exists) {
      await connection.unsafe(`CREATE DATABASE ${template}`);
      const sql = createDatabase(databaseUrl(template), { max: 1 });
      try {
        await migrate(sql);
      } finally {
        await sql.end();
      }
    }
    await connection`SELECT pg_advisory_unlock(727275)`;
  } finally {
    connection.release();
    await admin.end();
  }
}
