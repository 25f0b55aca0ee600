// `npm run migrate` and `npm start`: brings the database to the newest schema and exits. An entry
// point, so it sits above both the configuration and the database layer: db/ never reads the
// environment itself, each service hands it the settings it loaded.
import { loadConfig } from './config.js';
import { createDatabase } from './db/client.js';
import { migrate } from './db/migrate.js';

const config = loadConfig();
const sql = createDatabase(config.DATABASE_URL, { max: 1, applicationName: 'deeplink-migrate' });
try {
  const version = await migrate(sql, (line) => console.log(`[migrate] ${line}`));
  console.log(`[migrate] database is at version ${version}`);
} finally {
  await sql.end({ timeout: 5 });
}
