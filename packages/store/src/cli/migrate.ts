import { assertSchemaCompatible, migrateToLatest } from '../db/migrate.js';
import { createDb } from '../db/database.js';

// `pnpm db:migrate`: the one place in this package that reads the environment. The migration
// lock is a session lock: DATABASE_DIRECT_URL when set (DATABASE_URL may be a transaction pooler).
const connectionString = process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL;
if (connectionString === undefined || connectionString === '') {
  console.error('DATABASE_URL is required (e.g. postgres://postgres@127.0.0.1:5432/mcp_tasks)');
  process.exit(2);
}

// No statement timeout: a second migrator legitimately waits for the first one's lock.
const db = createDb({
  connectionString,
  max: 2,
  applicationName: 'mcp-tasks migrate',
  statementTimeoutMs: 0,
});
try {
  const { applied } = await migrateToLatest(db);
  await assertSchemaCompatible(db);
  console.log(applied.length === 0 ? 'schema up to date' : `applied ${applied.join(', ')}`);
} catch (error) {
  console.error('migration failed:', error);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
