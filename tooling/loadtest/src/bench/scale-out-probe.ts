/**
 * Where the scale-out tax goes (issue 30), in counts rather than timings: for 1 + 1 and then
 * 2 + 2 (gateways + workers, each from its build), the Redis commands and Postgres commits per
 * second while IDLE, then Postgres statements per finished task and rows per statement under the
 * end-to-end load (pg_stat_statements, when the server preloads it; otherwise that part says so).
 * Counters are server-wide: run it on a Postgres and Redis of its own for clean figures.
 *
 *   IDLE_S=30 DURATION_S=8 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/scale-out-probe.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase, createTestRedis, postgresBaseUrl } from '@mcp-tasks/testing';
import pg from 'pg';
import { startBenchStack } from './bench-stack.js';
import { deleteRedisPrefix } from './cleanup.js';
import { runEndToEnd } from './end-to-end.js';
import { commandDeltas, redisCommandCalls } from './redis-commandstats.js';

const idleS = Number(process.env.IDLE_S ?? 30);
const durationS = Number(process.env.DURATION_S ?? 8);
const SHAPES = [
  [1, 1],
  [2, 2],
] as const;

const database = await createTestDatabase('scaleout');
const redis = await createTestRedis('scaleout');
const db = createDb({ connectionString: database.connectionString });
await migrateToLatest(db);
await db.destroy();
const statsUrl = await postgresBaseUrl();
const admin = new pg.Client({ connectionString: database.connectionString });
await admin.connect();
const statements = await admin
  .query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  .then(() => admin.query('SELECT pg_stat_statements_reset()'))
  .then(
    () => true,
    (error: unknown) => {
      console.log(`statements per task skipped: ${String(error)}`);
      return false;
    },
  );
const commits = async (): Promise<number> => {
  const { rows } = await admin.query<{ xact_commit: string }>(
    'SELECT xact_commit FROM pg_stat_database WHERE datname = $1',
    [database.name],
  );
  return Number(rows[0]!.xact_commit);
};

try {
  for (const [gateways, workers] of SHAPES) {
    const stack = await startBenchStack({
      databaseUrl: database.connectionString,
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      gateways,
      workers,
      workerConcurrency: 32,
    });
    const shape = `${gateways}+${workers}`;
    try {
      await sleep(5_000);
      const before = { redis: await redisCommandCalls(redis.url), commits: await commits() };
      await sleep(idleS * 1_000);
      const after = { redis: await redisCommandCalls(redis.url), commits: await commits() };
      // The first INFO shows in the second; each commits() read is one transaction.
      const idle = commandDeltas(before.redis, {
        ...after.redis,
        info: (after.redis.info ?? 1) - 1,
      });
      const total = idle.reduce((sum, entry) => sum + entry.calls, 0);
      console.log(
        `${shape} idle: Redis ${(total / idleS).toFixed(2)} commands/s (${idle
          .map((entry) => `${entry.command} ${(entry.calls / idleS).toFixed(2)}`)
          .join(
            ', ',
          )}); Postgres ${((after.commits - before.commits - 1) / idleS).toFixed(2)} commits/s`,
      );
      const e2e = {
        stack,
        databaseUrl: database.connectionString,
        statsUrl,
        databaseName: database.name,
        redisUrl: redis.url,
        concurrency: 32,
        durationS: 3,
        warmupS: 1,
      };
      await runEndToEnd(e2e);
      if (statements) await admin.query('SELECT pg_stat_statements_reset()');
      const loaded = await runEndToEnd({ ...e2e, durationS, warmupS: 0.001 });
      console.log(
        `${shape} loaded: ${loaded.tasks} tasks, ${loaded.tasksPerS.toFixed(0)}/s, PG commits ${loaded.commitsPerTask.toFixed(2)}/task, Redis ${loaded.redisCommandsPerTask.toFixed(1)} commands/task, CPU gateway ${loaded.gatewayCpuMsPerTask.toFixed(2)} / worker ${loaded.workerCpuMsPerTask.toFixed(2)} ms/task`,
      );
      if (!statements) continue;
      const { rows } = await admin.query<{ calls: string; rows: string; query: string }>(
        `SELECT calls, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 80) AS query
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
         WHERE d.datname = $1 ORDER BY calls DESC LIMIT 12`,
        [database.name],
      );
      for (const row of rows)
        console.log(
          `  ${(Number(row.calls) / loaded.tasks).toFixed(3)} calls/task, ${(Number(row.rows) / Math.max(1, Number(row.calls))).toFixed(1)} rows/call: ${row.query}`,
        );
    } finally {
      await stack.stop();
    }
  }
} finally {
  await admin.end();
  await database.drop();
  await deleteRedisPrefix(redis.url, redis.prefix);
}
