import { describeServerCpu, runEventsCost } from './events-cost.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { buildStalePackages } from '@mcp-tasks/stack';
import { DEFAULT_SWEEP_BATCH, createDb, migrateToLatest } from '@mcp-tasks/store';
import {
  createTestDatabase,
  createTestRedis,
  launchProcess,
  freePort,
  type LaunchedProcess,
  postgresBaseUrl,
  type TestDatabase,
  type TestRedis,
  privatePostgresUnavailableReason,
  repoRoot,
} from '@mcp-tasks/testing';
import { Command } from 'commander';
import { positiveNumber } from '../option-parsers.js';
import pg from 'pg';
import { renderComparisons, renderMeasurements, type BenchResults } from './bench-report.js';
import { startBenchStack, type BenchStack, type StackCostOptions } from './bench-stack.js';
import { runBullmqNoop } from './bullmq-noop.js';
import { deleteRedisPrefix, waitUntilAllTasksEnded } from './cleanup.js';
import { runConstantRate } from './constant-rate.js';
import { renderCpuProfileDir } from './cpu-profile-summary.js';
import { runEffectsCost } from './effects-cost.js';
import { runTracesCost } from './traces-cost.js';
import { runRealisticMix } from './realistic-mix.js';
import { runEndToEnd, type EndToEndResult } from './end-to-end.js';
import { runHttpLoad, type HttpLoadResult } from './http-load.js';
import {
  createTaskRequest,
  getTaskRequest,
  sendMcp,
  type HttpRequestSpec,
} from './mcp-requests.js';
import { FIGURES, parseFigureList, selectFigures, type Figure } from './figures.js';
import { runPgbenchInsert } from './pgbench.js';
import { runSyncCommitBench } from './sync-commit.js';
import { runSweepThroughput } from './sweep-throughput.js';
import { runAtSize } from './at-size.js';

/**
 * `pnpm bench`: every figure of issue 9 item 5 in one run on this machine, ours next to a
 * baseline measured in the same run. Postgres and Redis come from DATABASE_URL / REDIS_URL (the
 * test defaults); the bench works in a scratch database and a Redis prefix of its own.
 */
interface BenchOptions {
  quick: boolean;
  duration?: number;
  warmup?: number;
  concurrency: number;
  rate: number;
  json?: string;
  only?: Figure[];
  cpuProf?: string;
  atSizeRows?: number;
  pairs?: number;
  together: boolean;
}

const CONNECTIONS = [1, 32];
const log = (line: string) => console.error(`[bench] ${line}`);

interface HttpTarget {
  label: string;
  baseUrl: string;
  request: HttpRequestSpec;
  expectBody: (body: string) => boolean;
  serverPid: number;
}

/**
 * Every target at 1 connection, then every target at 32, each right after the other: on a shared
 * machine the load changes from minute to minute, and a ratio is only fair between figures
 * taken seconds apart. Returns one list per target, in CONNECTIONS order.
 */
async function measureHttp(
  targets: readonly HttpTarget[],
  durationS: number,
  warmupS: number,
): Promise<HttpLoadResult[][]> {
  const results = targets.map((): HttpLoadResult[] => []);
  for (const connections of CONNECTIONS) {
    for (const [i, { label, ...target }] of targets.entries()) {
      await runHttpLoad({ ...target, connections, durationS: warmupS });
      const result = await runHttpLoad({ ...target, connections, durationS });
      log(
        `${label}, ${connections} conn: ${result.requestsPerS.toFixed(0)} req/s, p50 ${result.latency.p50.toFixed(2)} ms, p99 ${result.latency.p99.toFixed(2)} ms, server CPU ${result.serverCpuUsPerRequest?.toFixed(0) ?? '-'} µs/request, failures ${result.failures}`,
      );
      results[i]!.push(result);
    }
  }
  return results;
}

async function prepareReadTable(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE bench_read (id text PRIMARY KEY, status text NOT NULL, payload jsonb NOT NULL)',
    );
    await client.query(
      `INSERT INTO bench_read SELECT 'task-' || i, 'working', jsonb_build_object('n', i) FROM generate_series(1, 10000) AS i`,
    );
    await client.query('ANALYZE bench_read');
  } finally {
    await client.end();
  }
}

/** "43.0: evalsha 3.00, xadd 4.00, …": every command, for the per-command table. */
const redisBreakdown = (x: EndToEndResult): string =>
  `${x.redisCommandsPerTask.toFixed(2)}: ${x.redisCommands
    .map((c) => `${c.command} ${c.perTask.toFixed(2)}`)
    .join(', ')}`;

/** "gateway 1 of 1+1", "worker 2 of 2+2": which process of which stack a profile came from. */
function processLabels(stacks: readonly BenchStack[]): Map<number, string> {
  const labels = new Map<number, string>();
  for (const stack of stacks) {
    const shape = `${stack.gateways.length}+${stack.workers.length}`;
    stack.gateways.forEach((gateway, i) =>
      labels.set(gateway.process.child.pid!, `gateway ${i + 1} of ${shape}`),
    );
    stack.workers.forEach((worker, i) =>
      labels.set(worker.child.pid!, `worker ${i + 1} of ${shape}`),
    );
  }
  return labels;
}

/** What every step of one bench run shares. */
interface BenchRun {
  options: BenchOptions;
  durationS: number;
  warmupS: number;
  figures: Set<Figure>;
  database: TestDatabase;
  redis: TestRedis;
  statsUrl: string;
  stacks: BenchStack[];
  results: BenchResults;
}

/** (a) pgbench and (b) raw BullMQ: the baselines that need no server of ours. */
async function measureRawBaselines(run: BenchRun): Promise<void> {
  const { figures, database, durationS, results } = run;
  if (figures.has('pgbench')) {
    const one = await runPgbenchInsert(database.connectionString, 1, durationS);
    log(`(a) pgbench INSERT 1 client: ${one.tps.toFixed(0)} tps`);
    const eight = await runPgbenchInsert(database.connectionString, 8, durationS);
    log(`(a) pgbench INSERT 8 clients: ${eight.tps.toFixed(0)} tps`);
    results.pgbench = { one, eight };
  }

  if (figures.has('bullmq')) {
    results.bullmq = await measureRawBullmq(run);
    log(`(b) raw BullMQ no-op: ${results.bullmq.jobsPerS.toFixed(0)} jobs/s`);
  }
}

/** (b) raw BullMQ no-op jobs on the run's Redis, a prefix of its own. */
function measureRawBullmq(run: BenchRun) {
  return runBullmqNoop({
    redisUrl: run.redis.url,
    prefix: `${run.redis.prefix}-raw`,
    durationS: run.durationS,
    warmupS: run.warmupS,
    concurrency: run.options.concurrency,
  });
}

const rpcResult = (body: string) => body.includes('"result":{');

/** (c) The bare Hono server (JSON, + pg) and its two HTTP targets. */
async function startHonoBaseline(
  run: BenchRun,
  httpTargets: HttpTarget[],
): Promise<LaunchedProcess> {
  await prepareReadTable(run.database.connectionString);
  const port = await freePort();
  const baseline = await launchProcess({
    entry: 'tooling/loadtest/src/bench/hono-baseline-server.ts',
    env: { PORT: String(port), DATABASE_URL: run.database.connectionString },
    readyUrl: `http://127.0.0.1:${port}/healthz`,
    // As long as the bench's own stacks get (bench-stack.ts): beside eight other CI checks a
    // start-up can outlast launchProcess's default 20 s.
    readyTimeoutMs: 60_000,
  });
  const read = getTaskRequest('task-42');
  const baselineUrl = `http://127.0.0.1:${port}`;
  httpTargets.push(
    {
      label: '(c) bare Hono JSON',
      baseUrl: baselineUrl,
      request: { ...read, path: '/json' },
      expectBody: rpcResult,
      serverPid: baseline.child.pid!,
    },
    {
      label: '(c) bare Hono + pg',
      baseUrl: baselineUrl,
      request: { ...read, path: '/pg' },
      expectBody: rpcResult,
      serverPid: baseline.child.pid!,
    },
  );
  return baseline;
}

function benchStackOptions(run: BenchRun) {
  return {
    databaseUrl: run.database.connectionString,
    redisUrl: run.redis.url,
    redisPrefix: run.redis.prefix,
    workerConcurrency: run.options.concurrency,
    cpuProfileDir: run.options.cpuProf,
  };
}

/** What every measurement on a bench stack of ours shares (the end-to-end lines and their costs). */
function stackCost(run: BenchRun): StackCostOptions {
  return {
    databaseUrl: run.database.connectionString,
    statsUrl: run.statsUrl,
    databaseName: run.database.name,
    redisUrl: run.redis.url,
    concurrency: run.options.concurrency,
    durationS: run.durationS,
    warmupS: run.warmupS,
    stackOptions: benchStackOptions(run),
    stacks: run.stacks,
  };
}

/** (c) every HTTP target (the bare Hono server's and ours tasks/get), the baseline stopped after. */
async function measureHttpTargets(
  run: BenchRun,
  httpTargets: HttpTarget[],
  baseline: LaunchedProcess | undefined,
  small: BenchStack | undefined,
): Promise<void> {
  const { figures, results } = run;
  try {
    if (small !== undefined && figures.has('tasks-get')) {
      const gatewayUrl = small.gateways[0]!.url;
      const created = await sendMcp(gatewayUrl, createTaskRequest());
      const taskId = created.taskId as string;
      httpTargets.push({
        label: '(c) ours tasks/get',
        baseUrl: gatewayUrl,
        request: getTaskRequest(taskId),
        expectBody: (body) => body.includes(`"taskId":"${taskId}"`),
        serverPid: small.gateways[0]!.process.child.pid!,
      });
    }
    const http = await measureHttp(httpTargets, run.durationS, run.warmupS);
    if (baseline !== undefined) results.hono = { json: http[0]!, pg: http[1]! };
    if (small !== undefined && figures.has('tasks-get')) results.tasksGet = http.at(-1);
  } finally {
    await baseline?.stop();
  }
}

/** (d) create at a fixed rate on the 1+1 stack, then wait for its backlog. */
async function measureCreateAtFixedRate(run: BenchRun, gatewayUrl: string): Promise<void> {
  const { options } = run;
  const createdTask = (body: string) => body.includes('"resultType":"task"');
  await runConstantRate({
    baseUrl: gatewayUrl,
    request: createTaskRequest,
    ratePerS: options.rate,
    durationS: run.warmupS,
    isSuccess: createdTask,
  });
  const createAtFixedRate = await runConstantRate({
    baseUrl: gatewayUrl,
    request: createTaskRequest,
    ratePerS: options.rate,
    durationS: run.durationS,
    isSuccess: createdTask,
  });
  log(
    `(d) create at ${options.rate}/s: p50 ${createAtFixedRate.latency.p50.toFixed(2)} ms, p99 ${createAtFixedRate.latency.p99.toFixed(2)} ms, failures ${JSON.stringify(createAtFixedRate.failureReasons)}`,
  );
  run.results.createAtFixedRate = createAtFixedRate;
  const drainedMs = await waitUntilAllTasksEnded(run.database.connectionString, 300_000);
  log(`backlog of the fixed-rate run finished in ${(drainedMs / 1_000).toFixed(1)} s`);
}

/**
 * (e) end-to-end on the 1+1 stack (stopped after), then on a 2+2 stack with the same clients and
 * with twice as many.
 */
async function measureEndToEnd(run: BenchRun, small: BenchStack): Promise<void> {
  const e2eOptions = stackCost(run);
  const before = run.figures.has('bullmq') ? await measureRawBullmq(run) : undefined;
  const endToEnd = [await runEndToEnd({ ...e2eOptions, stack: small })];
  log(`(e) end-to-end 1+1: ${endToEnd[0]!.tasksPerS.toFixed(1)} tasks/s`);
  if (before !== undefined) {
    const after = await measureRawBullmq(run);
    run.results.bullmqBesideEndToEnd = { before, after };
    log(
      `(b) raw BullMQ no-op beside the 1+1 line: ${before.jobsPerS.toFixed(0)} before, ${after.jobsPerS.toFixed(0)} after`,
    );
  }
  log(`(e) Redis commands per task, 1+1: ${redisBreakdown(endToEnd[0]!)}`);
  await small.stop();
  const large = await startBenchStack({ ...benchStackOptions(run), gateways: 2, workers: 2 });
  run.stacks.push(large);
  endToEnd.push(await runEndToEnd({ ...e2eOptions, stack: large }));
  log(`(e) end-to-end 2+2: ${endToEnd[1]!.tasksPerS.toFixed(1)} tasks/s`);
  log(`(e) Redis commands per task, 2+2: ${redisBreakdown(endToEnd[1]!)}`);
  // Twice the clients: each replica sees the load it saw at 1 + 1, which separates what adding
  // replicas costs per task from what splitting the same load across them costs (issue 30).
  const wide = e2eOptions.concurrency * 2;
  endToEnd.push(await runEndToEnd({ ...e2eOptions, concurrency: wide, stack: large }));
  log(`(e) end-to-end 2+2, ${wide} clients: ${endToEnd[2]!.tasksPerS.toFixed(1)} tasks/s`);
  await large.stop();
  run.results.endToEnd = endToEnd;
}

/** (c) HTTP, (d) create and (e) end-to-end: the baselines and our figures on a 1+1 stack. */
async function measureOurs(run: BenchRun): Promise<void> {
  const { figures } = run;
  const httpTargets: HttpTarget[] = [];
  const baseline = figures.has('hono') ? await startHonoBaseline(run, httpTargets) : undefined;
  const measuresOurs =
    figures.has('tasks-get') ||
    figures.has('create') ||
    figures.has('e2e') ||
    figures.has('e2e-effects') ||
    figures.has('e2e-traces') ||
    figures.has('e2e-realistic');
  if (measuresOurs || figures.has('at-size')) await buildStalePackages(repoRoot, log);
  const small = measuresOurs
    ? await startBenchStack({ ...benchStackOptions(run), gateways: 1, workers: 1 })
    : undefined;
  if (small !== undefined) run.stacks.push(small);
  await measureHttpTargets(run, httpTargets, baseline, small);

  if (small !== undefined) {
    if (figures.has('create')) await measureCreateAtFixedRate(run, small.gateways[0]!.url);
    if (figures.has('e2e')) await measureEndToEnd(run, small);
    await small.stop();
  }
}

/** The costs on stacks of their own: effects, traces, the realistic mix, task history. */
async function measureCosts(run: BenchRun): Promise<void> {
  const { figures, options, results } = run;
  if (figures.has('e2e-effects')) {
    results.endToEndEffects = await runEffectsCost(stackCost(run));
  }

  if (figures.has('e2e-traces')) {
    results.endToEndTraces = await runTracesCost({
      ...stackCost(run),
      ratePerS: options.rate,
      pairs: options.pairs ?? (options.quick ? 1 : 5),
      together: options.together,
    });
  }

  if (figures.has('e2e-realistic')) {
    results.realisticMix = await runRealisticMix({ ...stackCost(run), ratePerS: options.rate });
  }

  if (figures.has('events')) {
    const events = await runEventsCost({
      databaseUrl: run.database.connectionString,
      concurrency: 8,
      durationS: run.durationS,
      warmupS: run.warmupS,
      rounds: options.quick ? 1 : 3,
    });
    results.taskEvents = events;
    log(
      `(g) task history triggers: ${events.on.toFixed(0)} lifecycles/s on vs ${events.off.toFixed(0)} off = ${events.ratio.toFixed(2)} on/off (median of ${events.rounds} alternating rounds); ${describeServerCpu(events)}`,
    );
  }

  const noCluster = privatePostgresUnavailableReason();
  if (figures.has('sync-commit') && noCluster !== null)
    log(`(f) synchronous_commit skipped: ${noCluster}`);
  else if (figures.has('sync-commit')) {
    results.syncCommit = await runSyncCommitBench({
      durationS: run.durationS,
      warmupS: run.warmupS,
      concurrency: 8,
      log,
    });
  }
}

/** (g) the sweep, in a database of its own: the backlog is truncated and refilled between rounds. */
async function measureSweep(run: BenchRun): Promise<void> {
  const sweepDatabase = await createTestDatabase('bench_sweep');
  try {
    const sweepDb = createDb({ connectionString: sweepDatabase.connectionString });
    await migrateToLatest(sweepDb);
    await sweepDb.destroy();
    const [sweep] = await runSweepThroughput({
      connectionString: sweepDatabase.connectionString,
      rows: run.options.quick ? 20_000 : 200_000,
      variants: [{ batchSize: DEFAULT_SWEEP_BATCH, resume: true }],
      rounds: run.options.quick ? 1 : 3,
      log: (line) => log(`(g) ${line}`),
    });
    run.results.sweep = sweep;
  } finally {
    await sweepDatabase.drop();
  }
}

/** (h) the at-size figures, in databases of their own: millions of rows are written into one. */
async function measureAtSize(run: BenchRun): Promise<void> {
  const { options, redis } = run;
  const emptyDatabase = await createTestDatabase('bench_at_size_empty');
  const fullDatabase = await createTestDatabase('bench_at_size');
  try {
    for (const database of [emptyDatabase, fullDatabase]) {
      const sizeDb = createDb({ connectionString: database.connectionString });
      await migrateToLatest(sizeDb);
      await sizeDb.destroy();
    }
    run.results.atSize = await runAtSize({
      emptyDatabaseUrl: emptyDatabase.connectionString,
      fullDatabaseUrl: fullDatabase.connectionString,
      redisUrl: redis.url,
      redisPrefix: `${redis.prefix}-at-size`,
      rows: options.atSizeRows ?? (options.quick ? 20_000 : 10_000_000),
      rounds: options.quick ? 2 : 6,
      ratePerS: options.rate,
      durationS: run.durationS,
      warmupS: run.warmupS,
      concurrency: options.concurrency,
      log: (line) => log(`(h) ${line}`),
    });
  } finally {
    await emptyDatabase.drop();
    await fullDatabase.drop();
    for (const side of ['empty', 'full'])
      await deleteRedisPrefix(redis.url, `${redis.prefix}-at-size-${side}`);
  }
}

/** The tables on stdout, the CPU profiles' summary, the JSON file. */
async function report(run: BenchRun): Promise<void> {
  const { options, results, stacks } = run;
  console.log(renderMeasurements(results));
  console.log(renderComparisons(results));
  if (results.taskEvents !== undefined)
    console.log(
      `task history (task_events triggers) on the hot paths: ${results.taskEvents.on.toFixed(0)} vs ${results.taskEvents.off.toFixed(0)} lifecycles/s (create, claim, 2 checkpoints, 2 renewals, complete; 8 loops) = ${(results.taskEvents.ratio * 100).toFixed(0)} % of the rate without them (target ≥ 90 %); ${describeServerCpu(results.taskEvents)}`,
    );
  if (options.cpuProf !== undefined) {
    await Promise.all(stacks.map((stack) => stack.stop()));
    console.log(await renderCpuProfileDir(options.cpuProf, processLabels(stacks)));
    log(
      `CPU profiles of every gateway and worker are in ${options.cpuProf} (open them in Chrome DevTools or speedscope)`,
    );
  }
  if (options.json !== undefined)
    await writeFile(options.json, `${JSON.stringify(results, null, 2)}\n`);
}

async function bench(options: BenchOptions): Promise<void> {
  const durationS = options.duration ?? (options.quick ? 2 : 10);
  const warmupS = options.warmup ?? (options.quick ? 1 : 3);
  const figures = selectFigures(options.only);
  if (options.cpuProf !== undefined) {
    options.cpuProf = resolve(options.cpuProf);
    await mkdir(options.cpuProf, { recursive: true });
  }
  const database = await createTestDatabase('bench');
  const redis = await createTestRedis('bench');
  const statsUrl = await postgresBaseUrl();
  log(
    `scratch database ${database.name}, Redis prefix ${redis.prefix}; ${durationS} s per measurement after ${warmupS} s warm-up; figures: ${[...figures].join(', ')}`,
  );
  const stacks: BenchStack[] = [];
  let cleaned: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaned ??= (async () => {
      await Promise.allSettled(stacks.map((s) => s.stop()));
      await database.drop();
      await deleteRedisPrefix(redis.url, redis.prefix);
    })());
  // Interrupted: still stop the processes, drop the scratch database and the Redis keys.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
  const run: BenchRun = {
    options,
    durationS,
    warmupS,
    figures,
    database,
    redis,
    statsUrl,
    stacks,
    results: {},
  };
  try {
    const db = createDb({ connectionString: database.connectionString });
    await migrateToLatest(db);
    await db.destroy();
    await measureRawBaselines(run);
    await measureOurs(run);
    await measureCosts(run);
    if (figures.has('sweep')) await measureSweep(run);
    if (figures.has('at-size')) await measureAtSize(run);
    await report(run);
  } finally {
    await cleanUp();
  }
}

const program = new Command('bench')
  .description(
    'Measure mcp-tasks against same-run baselines: pgbench, raw BullMQ, bare Hono (+pg), and our create, tasks/get and end-to-end paths.',
  )
  .option(
    '--quick',
    'a smoke run for CI: 2 s per measurement, 1 s warm-up, one round of the paired figures, small tables',
    false,
  )
  .option('--duration <s>', 'seconds per measurement (default 10, --quick 2)', positiveNumber)
  .option(
    '--warmup <s>',
    'warm-up seconds before each measurement (default 3, --quick 1)',
    positiveNumber,
  )
  .option(
    '--concurrency <n>',
    'clients for the end-to-end run, BullMQ concurrency and worker concurrency',
    positiveNumber,
    32,
  )
  .option(
    '--rate <n>',
    'requests per second of the fixed-rate runs (create, the tracing CPU per task)',
    positiveNumber,
    200,
  )
  .option(
    '--pairs <n>',
    'paired rounds (off, on) of the tracing CPU per task (default 5, --quick 1)',
    positiveNumber,
  )
  .option(
    '--together',
    'run both sides of each tracing pair at the same time (two stacks, each at --rate) instead of in turns',
    false,
  )
  .option(
    '--at-size-rows <n>',
    'retained rows written for the at-size figures (default 10,000,000; --quick 20,000)',
    positiveNumber,
  )
  .option('--json <file>', 'also write every figure as JSON')
  .option(
    '--only <figures>',
    `measure only these (comma-separated: ${FIGURES.join(', ')}); each of ours brings the baselines it is compared with`,
    parseFigureList,
  )
  .option(
    '--cpu-prof <dir>',
    'run the gateways and workers under node --cpu-prof and leave their .cpuprofile files in DIR',
  )
  .action(bench);

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
