import { loadConfig } from '../config.js';
import { createDatabase } from './client.js';
import { migrate } from './migrate.js';

const config = loadConfig();
const sql = createDatabase(config.DATABASE_URL, { max: 1, applicationName: 'deeplink-migrate' });
try {
  const version = await migrate(sql, (line) => console.log(`[migrate] ${line}`));
  console.log(`[migrate] database is at version ${version}`);
} finally {
  await sql.end({ timeout: 5 });
}
