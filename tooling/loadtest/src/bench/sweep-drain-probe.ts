/**
 * How fast a real worker's sweeper (default settings) works off a backlog: ROWS `working` tasks
 * whose TTL ran out and ROWS terminal tasks past retention, written straight into a fresh
 * database before the worker starts. Prints, for each build, when each backlog reached zero (or
 * how far it got within LIMIT_S seconds) and its rows per second. OTHER_WORKER=path/to/main.js
 * measures another build in turns with this one (e.g. main's), each round on a fresh database;
 * SWEEP_BATCH_SIZES=1000,5000 measures this build once per batch size; RETAINED=0 leaves out the
 * rows past retention (the expired backlog alone).
 *
 *   ROWS=700000 ROUNDS=1 OTHER_WORKER=/work/main/apps/worker/dist/main.js \
 *     pnpm exec tsx --conditions=@mcp-tasks/source tooling/loadtest/src/bench/sweep-drain-probe.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase, createTestRedis } from '@mcp-tasks/testing';
import pg from 'pg';
import { startBenchStack } from './bench-stack.js';
import { deleteRedisPrefix } from './cleanup.js';
import { fillExpiredBacklog } from './sweep-throughput.js';

const rows = Number(process.env.ROWS ?? 700_000);
const rounds = Number(process.env.ROUNDS ?? 1);
const limitS = Number(process.env.LIMIT_S ?? 180);
/** RETAINED=0: the expired backlog alone, nothing past retention. */
const retained = Number(process.env.RETAINED ?? rows);
const builds: { name: string; entry?: string; env?: Record<string, string> }[] = [
  { name: 'this build' },
];
if (process.env.OTHER_WORKER !== undefined)
  builds.unshift({ name: 'other build', entry: process.env.OTHER_WORKER });
// SWEEP_BATCH_SIZES=1000,5000: this build once per batch size instead.
if (process.env.SWEEP_BATCH_SIZES !== undefined) {
  builds.pop();
  for (const size of process.env.SWEEP_BATCH_SIZES.split(','))
    builds.push({ name: `this build, SWEEP_BATCH_SIZE=${size}`, env: { SWEEP_BATCH_SIZE: size } });
}

const count = async (client: pg.Client, where: string): Promise<number> =>
  Number(
    (await client.query<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE ${where}`)).rows[0]!
      .n,
  );
const EXPIRE_DUE = `status IN ('working', 'input_required') AND expires_at <= now()`;
const DELETE_DUE = `id LIKE 'retained-%'`;

for (let round = 1; round <= rounds; round++)
  for (const build of builds) {
    const database = await createTestDatabase('sweep_drain');
    const redis = await createTestRedis('sweep_drain');
    const db = createDb({ connectionString: database.connectionString, statementTimeoutMs: 0 });
    await migrateToLatest(db);
    await db.destroy();
    await fillExpiredBacklog(database.connectionString, rows);
    const client = new pg.Client({ connectionString: database.connectionString });
    await client.connect();
    await client.query(
      `SET session_replication_role = replica;
       INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, result,
                          created_at, last_updated_at, ttl_ms, expires_at)
       SELECT 'retained-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'generate_report',
              '{"rows": 10}'::jsonb, 'completed', '{"content": []}'::jsonb,
              now() - interval '3 days', now() - interval '3 days', 60000,
              now() - interval '3 days' + g * interval '1 millisecond'
       FROM generate_series(1, ${retained}) AS g;
       RESET session_replication_role;`,
    );
    await client.query('VACUUM ANALYZE tasks');
    const stack = await startBenchStack({
      databaseUrl: database.connectionString,
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      gateways: 0,
      workers: 1,
      workerConcurrency: 32,
      workerEntry: build.entry,
      env: build.env,
    });
    const started = performance.now();
    const reached: Record<string, number | undefined> = {};
    let left = { expire: rows, delete: retained };
    try {
      while (performance.now() - started < limitS * 1_000) {
        left = { expire: await count(client, EXPIRE_DUE), delete: await count(client, DELETE_DUE) };
        const at = (performance.now() - started) / 1_000;
        if (left.expire === 0) reached.expire ??= at;
        if (left.delete === 0) reached.delete ??= at;
        if (left.expire === 0 && left.delete === 0) break;
        await sleep(1_000);
      }
    } finally {
      await stack.stop();
      await client.end();
      await database.drop();
      await deleteRedisPrefix(redis.url, redis.prefix);
    }
    const elapsed = (performance.now() - started) / 1_000;
    const line = (step: 'expire' | 'delete') => {
      const total = step === 'expire' ? rows : retained;
      const s = reached[step];
      return s !== undefined
        ? `${step} ${total} in ${s.toFixed(0)} s (${Math.round(total / s)} rows/s)`
        : `${step} ${total - left[step]} of ${total} in ${elapsed.toFixed(0)} s (${Math.round((total - left[step]) / elapsed)} rows/s)`;
    };
    console.log(`round ${round} ${build.name}: ${line('expire')}; ${line('delete')}`);
  }
