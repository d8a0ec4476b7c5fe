import pg from 'pg';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { waitUntilAllTasksEnded } from './cleanup.js';
import { runConstantRate } from './constant-rate.js';
import { runHttpLoad } from './http-load.js';
import { createTaskRequest, getTaskRequest, sendMcp } from './mcp-requests.js';
import {
  addSweeperWork,
  explainAtSize,
  fillRetainedTasks,
  type StatementPlan,
} from './at-size-statements.js';

/** Create at a fixed rate and tasks/get at 32 connections, on one state of the table. */
export interface AtSizeFigures {
  createP50Ms: number;
  createP99Ms: number;
  createFailures: number;
  getRequestsPerS: number;
  getP99Ms: number;
}

export interface AtSizeResult {
  rows: number;
  fillSeconds: number;
  tableBytes: number;
  indexBytes: number;
  empty: AtSizeFigures;
  full: AtSizeFigures;
  /** full ÷ empty: create p99 (target ≤ 1.3) and tasks/get req/s (target ≥ 0.75). */
  createP99Ratio: number;
  getRatio: number;
  plans: StatementPlan[];
}

const GET_CONNECTIONS = 32;

/**
 * Issue 25 item 3, side by side in one run: the same 1 gateway + 1 worker measured on an empty
 * `tasks`, then again after `rows` retained tasks were written into it; then the plans of the
 * statements that must stay index-driven at that size.
 */
export interface AtSizeOptions {
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  rows: number;
  ratePerS: number;
  durationS: number;
  warmupS: number;
  concurrency: number;
  log: (line: string) => void;
}

/** Create at the fixed rate, then tasks/get at 32 connections, on the table as it is. */
async function measureAtSize(
  options: AtSizeOptions,
  gateway: BenchStack['gateways'][number],
  label: string,
): Promise<AtSizeFigures> {
  const createdTask = (body: string) => body.includes('"resultType":"task"');
  const atRate = {
    baseUrl: gateway.url,
    request: createTaskRequest,
    ratePerS: options.ratePerS,
    isSuccess: createdTask,
  };
  await runConstantRate({ ...atRate, durationS: options.warmupS });
  const create = await runConstantRate({ ...atRate, durationS: options.durationS });
  await waitUntilAllTasksEnded(options.databaseUrl, 300_000);
  const created = await sendMcp(gateway.url, createTaskRequest());
  const taskId = created.taskId as string;
  const read = {
    baseUrl: gateway.url,
    request: getTaskRequest(taskId),
    connections: GET_CONNECTIONS,
    expectBody: (body: string) => body.includes(`"taskId":"${taskId}"`),
    serverPid: gateway.process.child.pid!,
  };
  await runHttpLoad({ ...read, durationS: options.warmupS });
  const get = await runHttpLoad({ ...read, durationS: options.durationS });
  const figures = {
    createP50Ms: create.latency.p50,
    createP99Ms: create.latency.p99,
    createFailures: create.failures,
    getRequestsPerS: get.requestsPerS,
    getP99Ms: get.latency.p99,
  };
  options.log(
    `${label}: create at ${options.ratePerS}/s p50 ${figures.createP50Ms.toFixed(2)} ms, p99 ${figures.createP99Ms.toFixed(2)} ms (failures ${figures.createFailures}); tasks/get at ${GET_CONNECTIONS} connections ${figures.getRequestsPerS.toFixed(0)} req/s, p99 ${figures.getP99Ms.toFixed(2)} ms`,
  );
  return figures;
}

/** The retained rows written (and vacuumed), with the table's and indexes' sizes after. */
async function fillTable(client: pg.Client, options: AtSizeOptions) {
  const fillStarted = performance.now();
  await fillRetainedTasks(client, options.rows, options.log);
  const fillSeconds = (performance.now() - fillStarted) / 1_000;
  const { rows: sizes } = await client.query<{ heap: string; indexes: string }>(
    `SELECT pg_table_size('tasks') AS heap, pg_indexes_size('tasks') AS indexes`,
  );
  options.log(
    `${options.rows} retained rows written and vacuumed in ${fillSeconds.toFixed(0)} s: table ${(Number(sizes[0]!.heap) / 1_048_576).toFixed(0)} MB, indexes ${(Number(sizes[0]!.indexes) / 1_048_576).toFixed(0)} MB`,
  );
  return { fillSeconds, sizes };
}

export async function runAtSize(options: AtSizeOptions): Promise<AtSizeResult> {
  const stack = await startBenchStack({
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    redisPrefix: options.redisPrefix,
    gateways: 1,
    workers: 1,
    workerConcurrency: options.concurrency,
  });
  let stackStopped = false;
  const stopStack = async () => {
    if (stackStopped) return;
    stackStopped = true;
    await stack.stop();
  };
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    const gateway = stack.gateways[0]!;
    const measure = (label: string) => measureAtSize(options, gateway, label);
    // A first round warms the stack up (JIT, pools, the planner's caches); then the table is
    // emptied, so the two measured rounds differ only in the retained rows.
    await measure('warm-up');
    await client.query('TRUNCATE tasks, task_events');
    const empty = await measure('empty table');
    const { fillSeconds, sizes } = await fillTable(client, options);
    const full = await measure(`${options.rows} rows`);
    await stopStack();
    await addSweeperWork(client);
    const plans = await explainAtSize(client);
    for (const plan of plans)
      options.log(
        `plan of ${plan.name}: ${plan.indexDriven ? 'index-driven' : 'SEQUENTIAL SCAN'}, ${plan.milliseconds.toFixed(2)} ms`,
      );
    return {
      rows: options.rows,
      fillSeconds,
      tableBytes: Number(sizes[0]!.heap),
      indexBytes: Number(sizes[0]!.indexes),
      empty,
      full,
      createP99Ratio: full.createP99Ms / empty.createP99Ms,
      getRatio: full.getRequestsPerS / empty.getRequestsPerS,
      plans,
    };
  } finally {
    await client.end();
    await stopStack();
  }
}
