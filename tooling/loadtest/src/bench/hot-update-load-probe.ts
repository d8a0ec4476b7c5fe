/**
 * The steady state of `tasks` under a lifecycle load (issue 25, docs/adr/0010): RATE tasks/s for
 * SECONDS against one gateway and one worker (from their builds) with LEASE_MS=1500, so the
 * worker renews every 500 ms while a step runs. Half the tasks are `slow_compute` for 3 s (three
 * one-second steps, each a checkpoint, renewals between), half `realistic_workflow` (three
 * checkpoints and an input pause, answered by `tasks/update` once `tasks/get` shows it). Every
 * 15 s and at the end: `n_tup_upd`, `n_tup_hot_upd`, live and dead tuples, autovacuum runs, heap
 * and index sizes of `tasks`; at the end the updates by kind, from the events the triggers wrote
 * (a renewal writes none: it is the rest). Two schemas in turns, each on a fresh stack: `main`
 * (migration 0022 undone before the load starts) and `0022`, the order swapped every round
 * (FIRST_ROUND=1 starts with `0022`).
 *
 *   RATE=20 SECONDS=60 ROUNDS=2 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/hot-update-load-probe.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MIGRATIONS, createDb } from '@mcp-tasks/store';
import { REALISTIC_TOOL_MODULE } from '@mcp-tasks/tools/bench';
import pg from 'pg';
import { Pool } from 'undici';
import { mcpRequest, sendMcp } from './mcp-requests.js';
import { approval, creatingCall, labelRound } from './realistic-requests.js';
import { startProbeStack } from './probe-stack.js';

const rate = Number(process.env.RATE ?? 20);
const seconds = Number(process.env.SECONDS ?? 60);
const rounds = Number(process.env.ROUNDS ?? 1);
/** The round to start at: an odd one starts with `0022` (the order alternates). */
const firstRound = Number(process.env.FIRST_ROUND ?? 0);
const SAMPLE_EVERY_MS = 15_000;
type Schema = 'main' | '0022';

const slowCompute = () =>
  mcpRequest('tools/call', { name: 'slow_compute', arguments: { seconds: 3 } });

// Where autovacuum would start on `tasks` (threshold + scale factor × rows), from the table's own
// settings or the server's: printed because the server may run with autovacuum off.
const TABLE_FIGURES = `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot, n_live_tup AS live,
    n_dead_tup AS dead, autovacuum_count AS autovacuums, current_setting('autovacuum') AS on,
    round(coalesce((SELECT option_value::float FROM pg_options_to_table(c.reloptions)
                    WHERE option_name = 'autovacuum_vacuum_threshold'),
                   current_setting('autovacuum_vacuum_threshold')::float)
          + coalesce((SELECT option_value::float FROM pg_options_to_table(c.reloptions)
                      WHERE option_name = 'autovacuum_vacuum_scale_factor'),
                     current_setting('autovacuum_vacuum_scale_factor')::float)
            * greatest(c.reltuples, n_live_tup)) AS vacuum_at,
    pg_size_pretty(pg_table_size('tasks')) AS heap, pg_size_pretty(pg_indexes_size('tasks')) AS indexes
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'tasks'`;

/** One line of the table's update counters, dead tuples, vacuum threshold and sizes. */
async function printFigures(monitor: pg.Client, label: string): Promise<void> {
  await monitor.query('SELECT pg_stat_clear_snapshot()');
  const row = (await monitor.query<Record<string, string>>(TABLE_FIGURES)).rows[0]!;
  const upd = Number(row.upd);
  const hot = Number(row.hot);
  const live = Number(row.live);
  const dead = Number(row.dead);
  console.log(
    `${label.padEnd(6)} n_tup_upd ${upd}  n_tup_hot_upd ${hot} (${((100 * hot) / Math.max(upd, 1)).toFixed(1)}%)  live ${live}  dead ${dead} (${((100 * dead) / Math.max(live, 1)).toFixed(0)}% of live)  vacuum due at ${row.vacuum_at} dead (autovacuum ${row.on}, runs ${row.autovacuums})  heap ${row.heap}  indexes ${row.indexes}`,
  );
}

/** One realistic lifecycle: a label round, the creating call, polls until the approval is asked. */
async function realisticLifecycle(gatewayUrl: string, http: Pool, turn: number): Promise<void> {
  const round = await sendMcp(gatewayUrl, labelRound(), http);
  const created = await sendMcp(gatewayUrl, creatingCall(round.requestState as string, turn), http);
  const taskId = created.taskId as string;
  for (let polls = 0; polls < 200; polls += 1) {
    await sleep(250);
    const task = await sendMcp(gatewayUrl, mcpRequest('tasks/get', { taskId }), http);
    if (task.status === 'input_required') {
      await sendMcp(gatewayUrl, approval(taskId), http);
      return;
    }
    if (task.status !== 'working') return;
  }
}

/** The task history's kinds and the indexes' sizes at the end of the round. */
async function printEvents(monitor: pg.Client): Promise<void> {
  const { rows: kinds } = await monitor.query<{ kind: string; n: string }>(
    `SELECT kind, count(*) AS n FROM task_events GROUP BY kind ORDER BY count(*) DESC`,
  );
  console.log(`events: ${kinds.map((k) => `${k.kind} ${k.n}`).join(', ')}`);
  const { rows: indexes } = await monitor.query<{ name: string; size: string }>(
    `SELECT indexrelname AS name, pg_size_pretty(pg_relation_size(indexrelid)) AS size
     FROM pg_stat_user_indexes WHERE relname = 'tasks' ORDER BY indexrelname`,
  );
  console.log(`indexes: ${indexes.map((i) => `${i.name} ${i.size}`).join(', ')}`);
}

async function runRound(schema: Schema): Promise<void> {
  const { stack, database, close } = await startProbeStack(`hot_load_${schema}`, 1, {
    env: { LEASE_MS: '1500', MCP_TOOL_MODULES: REALISTIC_TOOL_MODULE },
  });
  const monitor = new pg.Client({ connectionString: database.connectionString });
  const gateway = stack.gateways[0]!;
  const http = new Pool(gateway.url, { connections: 16 });
  try {
    await monitor.connect();
    if (schema === 'main') {
      const db = createDb({ connectionString: database.connectionString, max: 1 });
      await MIGRATIONS['0022_tasks_update_in_place']!.down!(db);
      await db.destroy();
    }
    const print = (label: string) => printFigures(monitor, label);
    console.log(`\n== schema ${schema}: ${rate} tasks/s for ${seconds} s, 1 gateway + 1 worker`);
    const failures: string[] = [];
    const inFlight: Promise<void>[] = [];
    const realistic = (turn: number) => realisticLifecycle(gateway.url, http, turn);
    const started = performance.now();
    let nextSample = SAMPLE_EVERY_MS;
    for (let turn = 0; turn < rate * seconds; turn += 1) {
      const due = (turn / rate) * 1_000;
      const wait = due - (performance.now() - started);
      if (wait > 0) await sleep(wait);
      const send =
        turn % 2 === 0
          ? sendMcp(gateway.url, slowCompute(), http).then(() => undefined)
          : realistic(turn);
      inFlight.push(send.catch((error: unknown) => void failures.push(String(error))));
      if (performance.now() - started >= nextSample) {
        await print(`${(nextSample / 1_000).toFixed(0)} s`);
        nextSample += SAMPLE_EVERY_MS;
      }
    }
    await Promise.all(inFlight);
    // The last tasks finish their steps (3 s) and settle.
    await sleep(5_000);
    await print('end');
    await printEvents(monitor);
    if (failures.length > 0)
      console.log(`${failures.length} lifecycles failed, the first: ${failures[0]}`);
  } finally {
    await http.close();
    await monitor.end();
    await close();
  }
}

for (let round = firstRound; round < firstRound + rounds; round += 1)
  for (const schema of (round % 2 === 0 ? ['main', '0022'] : ['0022', 'main']) as Schema[])
    await runRound(schema);
