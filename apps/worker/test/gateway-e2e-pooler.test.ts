import { pgBouncerUnavailableReason, skipUnlessEngine, startPgBouncer } from '@mcp-tasks/testing';
import pg from 'pg';
import { describe } from 'vitest';
import { describeEndToEnd } from './support/end-to-end-cases.js';

/**
 * Issue 26, part 1: the end-to-end cases with every gateway and worker behind a real PgBouncer
 * 1.18 in transaction mode (no prepared statements across transactions, no session state, no
 * statement_timeout at connect). The session work (LISTEN, the sweeper's lock, migrations) goes
 * to DATABASE_DIRECT_URL; the statement bound is the database's own, as docs/deployment.md says.
 */
const skip = skipUnlessEngine('PgBouncer', pgBouncerUnavailableReason());

describe.skipIf(skip)('behind PgBouncer (transaction pooling)', () => {
  describeEndToEnd({
    name: 'pgbouncer_transaction',
    async start(database) {
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE "${database.name}" SET statement_timeout = '10s'`);
      } finally {
        await admin.end();
      }
      const bouncer = await startPgBouncer({ target: database.url, poolMode: 'transaction' });
      return {
        env: {
          DATABASE_URL: bouncer.urlFor(database.url),
          DATABASE_DIRECT_URL: database.url,
          DATABASE_POOLER: 'transaction',
        },
        stop: () => bouncer.destroy(),
      };
    },
  });
});
