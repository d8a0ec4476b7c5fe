import {
  launchProcess,
  pgBouncerUnavailableReason,
  skipUnlessEngine,
  startPgBouncer,
  type PgBouncer,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_ENV, createHarness, type Harness } from './harness.js';

/**
 * A worker pointed at a real PgBouncer 1.18 without the settings it needs says so in one line and
 * exits 1, instead of running without a statement bound (issue 26).
 */
const skip = skipUnlessEngine('PgBouncer', pgBouncerUnavailableReason());

describe.skipIf(skip)('a worker behind PgBouncer, misconfigured', () => {
  let h: Harness;
  let bouncer: PgBouncer;

  beforeAll(async () => {
    h = await createHarness('worker_pooler_misconfiguration');
    bouncer = await startPgBouncer({ target: h.database.connectionString });
  }, 60_000);

  afterAll(async () => {
    await bouncer?.destroy();
    await h?.close();
  });

  const start = async (env: Record<string, string>) => {
    const worker = await launchProcess({
      entry: 'apps/worker/src/main.ts',
      env: {
        ...FAST_ENV,
        REDIS_URL: h.redis.url,
        REDIS_PREFIX: h.redis.prefix,
        METRICS_PORT: '0',
        DATABASE_URL: bouncer.urlFor(h.database.connectionString),
        ...env,
      },
    });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).not.toMatch(/\n\s+at /); // no stack trace
    return worker.stderr().trim().split('\n').at(-1);
  };

  it('without DATABASE_POOLER: names the setting PgBouncer refused', async () => {
    expect(await start({})).toBe(
      'DATABASE_URL: the server refused a connection setting (unsupported startup parameter: statement_timeout): it is a pooler such as PgBouncer. Set DATABASE_POOLER=transaction (and DATABASE_DIRECT_URL for the session work), see docs/deployment.md',
    );
  });

  it('with DATABASE_POOLER=transaction but no bound on the database: says how to set one', async () => {
    expect(
      await start({
        DATABASE_POOLER: 'transaction',
        DATABASE_DIRECT_URL: h.database.connectionString,
      }),
    ).toBe(
      "DATABASE_URL: DATABASE_POOLER=transaction and the server's statement_timeout is 0 (none), so a hung statement would wait for ever; set a bound where the pooler cannot drop it: ALTER DATABASE <name> SET statement_timeout = '10s' (or ALTER ROLE … SET), see docs/deployment.md",
    );
  });
});
