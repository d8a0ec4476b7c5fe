/**
 * Issue 30's scale-out figures for two builds in turns: per pair, 1 + 1 and 2 + 2 of each build
 * (the order of the builds swaps every pair), the closed-loop end-to-end load (end-to-end.ts):
 * tasks/s, CPU ms per task of the gateways and of the workers (split into the main thread and
 * the rest: V8's GC and compiler threads, libuv), Postgres commits per task, and the create,
 * claim and final statements per task with their rows per statement (pg_stat_statements). Each
 * side has its own scratch database (migrated by its own tree) and Redis prefix. DATABASE_URL must
 * name a server that preloads pg_stat_statements (one of its own: its counters are server-wide).
 *
 *   BASE_ROOT=/work/wt-base PAIRS=3 DURATION_S=5 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/scale-out-ab.ts
 *
 * SHAPES="1x1x16,2x2x64" measures other shapes and client counts; SIDES="name:root:KEY=VALUE;…,…"
 * more than two builds or environments. Two probes run at once (one side each, to share the
 * machine's load) keep their CPU and commit figures, but not their statement counts: each resets
 * pg_stat_statements server-wide.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase, createTestRedis, postgresBaseUrl, repoRoot } from '@mcp-tasks/testing';
import pg from 'pg';
import { startBenchStack } from './bench-stack.js';
import { deleteRedisPrefix } from './cleanup.js';
import { median } from './cpu-per-task.js';
import { statCpuMs } from './cpu-per-task.js';
import { sumOverProcesses } from './cpu.js';
import { runEndToEnd } from './end-to-end.js';

const pairs = Number(process.env.PAIRS ?? 3);
const durationS = Number(process.env.DURATION_S ?? 5);
const warmupS = Number(process.env.WARMUP_S ?? 2);
/** SIDES="name:root:KEY=VALUE;KEY=VALUE,…" measures more than two (each with its own env). */
const sides: { name: string; root: string; env?: Record<string, string> }[] = process.env.SIDES
  ? process.env.SIDES.split(',').map((spec) => {
      const [name, root, env] = spec.split(':');
      return {
        name: name!,
        root: resolve(root || repoRoot),
        env: Object.fromEntries(
          (env ?? '')
            .split(';')
            .filter(Boolean)
            .map((kv): [string, string] => [kv.split('=')[0]!, kv.split('=')[1] ?? '']),
        ),
      };
    })
  : [
      { name: 'base', root: resolve(process.env.BASE_ROOT ?? repoRoot) },
      { name: 'ours', root: resolve(process.env.OURS_ROOT ?? repoRoot) },
    ];
/** SHAPES="GxWxC,…": gateways x workers x closed-loop clients; default 1x1x32,2x2x32. */
const shapes = (process.env.SHAPES ?? '1x1x32,2x2x32')
  .split(',')
  .map((shape) => shape.split('x').map(Number) as [number, number, number]);

/** CPU ms of a process's main thread and of its other threads. */
function threadCpu(pid: number): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const ms = statCpuMs(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
    if (Number(tid) === pid) main += ms;
    else other += ms;
  }
  return { main, other };
}

type Row = Record<string, number>;
const results = new Map<string, Row[]>();
const statsUrl = await postgresBaseUrl();

async function statements(admin: pg.Client, database: string) {
  const { rows } = await admin.query<{ calls: string; rows: string; query: string }>(
    `SELECT calls, rows, regexp_replace(query, '\\s+', ' ', 'g') AS query
     FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
    [database],
  );
  return rows.map((r) => ({ calls: Number(r.calls), rows: Number(r.rows), query: r.query }));
}

async function measure(
  side: (typeof sides)[number],
  gateways: number,
  workers: number,
  concurrency: number,
) {
  const database = await createTestDatabase('soab');
  const redis = await createTestRedis('soab');
  await promisify(execFile)(
    process.execPath,
    [join(side.root, 'packages/store/dist/cli/migrate.js')],
    { env: { ...process.env, DATABASE_URL: database.connectionString } },
  );
  const admin = new pg.Client({ connectionString: database.connectionString });
  await admin.connect();
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const stack = await startBenchStack({
    databaseUrl: database.connectionString,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    gateways,
    workers,
    workerConcurrency: 32,
    appsRoot: side.root,
    env: side.env,
  });
  try {
    const e2e = {
      stack,
      databaseUrl: database.connectionString,
      statsUrl,
      databaseName: database.name,
      redisUrl: redis.url,
      concurrency,
      durationS: warmupS,
      warmupS: 1,
    };
    await runEndToEnd(e2e);
    await admin.query('SELECT pg_stat_statements_reset()');
    const gwPids = stack.gateways.map((g) => g.process.child.pid!);
    const wkPids = stack.workers.map((w) => w.child.pid!);
    const before = {
      gw: sumOverProcesses(gwPids, threadCpu),
      wk: sumOverProcesses(wkPids, threadCpu),
    };
    const loaded = await runEndToEnd({ ...e2e, durationS, warmupS: 0.001 });
    const after = {
      gw: sumOverProcesses(gwPids, threadCpu),
      wk: sumOverProcesses(wkPids, threadCpu),
    };
    const per = (v: number) => v / loaded.tasks;
    const stmts = await statements(admin, database.name);
    const pick = (re: RegExp) => {
      const hits = stmts.filter((s) => re.test(s.query));
      const calls = hits.reduce((a, s) => a + s.calls, 0);
      const rows = hits.reduce((a, s) => a + s.rows, 0);
      return { perTask: per(calls), rowsPer: calls === 0 ? 0 : rows / calls };
    };
    const create = pick(/^WITH input AS/);
    const claim = pick(/^WITH claimed_before AS/);
    const finalOne = pick(/^update "tasks" set "status" = \$1, "result"/);
    const finalShared = pick(/^UPDATE tasks AS t SET status = s\.status/);
    const total = per(stmts.reduce((a, s) => a + s.calls, 0));
    const row: Row = {
      tasksPerS: loaded.tasksPerS,
      gwCpu: loaded.gatewayCpuMsPerTask,
      wkCpu: loaded.workerCpuMsPerTask,
      gwMain: per(after.gw.main - before.gw.main),
      gwOther: per(after.gw.other - before.gw.other),
      wkMain: per(after.wk.main - before.wk.main),
      wkOther: per(after.wk.other - before.wk.other),
      commits: loaded.commitsPerTask,
      stmts: total,
      createPer: create.perTask,
      createRows: create.rowsPer,
      claimPer: claim.perTask,
      claimRows: claim.rowsPer,
      finalOnePer: finalOne.perTask,
      finalSharedPer: finalShared.perTask,
      finalSharedRows: finalShared.rowsPer,
    };
    const key = `${side.name} ${gateways}+${workers} c${concurrency}`;
    console.log(
      `${key}: ${Object.entries(row)
        .map(([k, v]) => `${k} ${v.toFixed(3)}`)
        .join(', ')}`,
    );
    if (process.env.SHOW_STATEMENTS)
      for (const s of stmts.sort((a, b) => b.calls - a.calls).slice(0, 14))
        console.log(
          `  ${per(s.calls).toFixed(3)}/task ${(s.rows / Math.max(1, s.calls)).toFixed(1)} rows: ${s.query.slice(0, 110)}`,
        );
    results.set(key, [...(results.get(key) ?? []), row]);
  } finally {
    await stack.stop();
    await admin.end();
    await database.drop();
    await deleteRedisPrefix(redis.url, redis.prefix);
  }
}

for (let pair = 0; pair < pairs; pair += 1) {
  const order = pair % 2 === 0 ? sides : [...sides].reverse();
  for (const [gateways, workers, concurrency] of shapes)
    for (const side of order) await measure(side, gateways, workers, concurrency);
}

console.log('\nmedians (min–max):');
for (const [key, rows] of results) {
  const fields = Object.keys(rows[0]!);
  console.log(
    `${key}: ${fields
      .map((f) => {
        const values = rows.map((r) => r[f]!);
        return `${f} ${median(values).toFixed(3)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
      })
      .join(', ')}`,
  );
}
