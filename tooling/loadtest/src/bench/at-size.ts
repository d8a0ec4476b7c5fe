import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { median } from './cpu-per-task.js';
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
  /** Each side's figures per round, measured in turns (empty first in odd rounds). */
  rounds: { empty: AtSizeFigures; full: AtSizeFigures }[];
  /** The median of each figure over the rounds, per side. */
  empty: AtSizeFigures;
  full: AtSizeFigures;
  /**
   * full ÷ empty: the geometric mean of each pair of rounds' ratios (one with either side
   * first), then the median over the pairs: create p99 (target ≤ 1.3) and tasks/get req/s
   * (target ≥ 0.75).
   */
  createP99Ratio: number;
  getRatio: number;
  plans: StatementPlan[];
}

const GET_CONNECTIONS = 32;

/**
 * Issue 25 item 3, side by side in one run: two 1 gateway + 1 worker stacks, one on an empty
 * `tasks` and one on a database holding `rows` retained tasks, measured in turns (ABBA), so a
 * slow spell of the machine weighs on both; then the plans of the statements that must stay
 * index-driven at that size.
 */
export interface AtSizeOptions {
  /** Two migrated databases: one stays empty, `rows` retained tasks are written into the other. */
  emptyDatabaseUrl: string;
  fullDatabaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  rows: number;
  /** Measured in pairs of rounds (either side first once), so rounded up to an even number. */
  rounds: number;
  ratePerS: number;
  durationS: number;
  warmupS: number;
  concurrency: number;
  log: (line: string) => void;
}

/** Create at the fixed rate, then tasks/get at 32 connections, on the table as it is. */
async function measureAtSize(
  options: AtSizeOptions,
  side: Side,
  label: string,
): Promise<AtSizeFigures> {
  const gateway = side.stack.gateways[0]!;
  const createdTask = (body: string) => body.includes('"resultType":"task"');
  const atRate = {
    baseUrl: gateway.url,
    request: createTaskRequest,
    ratePerS: options.ratePerS,
    isSuccess: createdTask,
  };
  await runConstantRate({ ...atRate, durationS: options.warmupS });
  const create = await runConstantRate({ ...atRate, durationS: options.durationS });
  await waitUntilAllTasksEnded(side.databaseUrl, 300_000);
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
  // The fill's dirty pages and WAL are written out now, not by a checkpoint during a round.
  await client.query('CHECKPOINT');
  const fillSeconds = (performance.now() - fillStarted) / 1_000;
  const { rows: sizes } = await client.query<{ heap: string; indexes: string }>(
    `SELECT pg_table_size('tasks') AS heap, pg_indexes_size('tasks') AS indexes`,
  );
  options.log(
    `${options.rows} retained rows written, vacuumed and checkpointed in ${fillSeconds.toFixed(0)} s: table ${(Number(sizes[0]!.heap) / 1_048_576).toFixed(0)} MB, indexes ${(Number(sizes[0]!.indexes) / 1_048_576).toFixed(0)} MB`,
  );
  return { fillSeconds, sizes };
}

/** One side of the comparison: its database and its own 1 + 1. */
interface Side {
  databaseUrl: string;
  stack: BenchStack;
}

const startSide = (options: AtSizeOptions, databaseUrl: string, prefix: string) =>
  startBenchStack({
    databaseUrl,
    redisUrl: options.redisUrl,
    redisPrefix: `${options.redisPrefix}-${prefix}`,
    gateways: 1,
    workers: 1,
    workerConcurrency: options.concurrency,
  }).then((stack): Side => ({ databaseUrl, stack }));

/**
 * The side measured second in a round reads slower (the first one's gateway still collecting
 * after its tasks/get load): seen as full ÷ empty 2.04, 1.49, 1.81 with the full side second and
 * 0.63, 0.38 with it first. A pair of rounds has each side once in each place; the geometric
 * mean of its two ratios cancels the order, and the median over pairs takes the middle one.
 */
export function pairedOrderRatio(ratios: readonly number[]): number {
  const pairs: number[] = [];
  for (let i = 0; i + 1 < ratios.length; i += 2) pairs.push(Math.sqrt(ratios[i]! * ratios[i + 1]!));
  return median(pairs);
}

const medianFigures = (figures: AtSizeFigures[]): AtSizeFigures => ({
  createP50Ms: median(figures.map((f) => f.createP50Ms)),
  createP99Ms: median(figures.map((f) => f.createP99Ms)),
  createFailures: figures.reduce((sum, f) => sum + f.createFailures, 0),
  getRequestsPerS: median(figures.map((f) => f.getRequestsPerS)),
  getP99Ms: median(figures.map((f) => f.getP99Ms)),
});

export async function runAtSize(options: AtSizeOptions): Promise<AtSizeResult> {
  const sides: Side[] = [];
  const stopStacks = async () => {
    await Promise.all(sides.splice(0).map((side) => side.stack.stop()));
  };
  const fullClient = new pg.Client({ connectionString: options.fullDatabaseUrl });
  const emptyClient = new pg.Client({ connectionString: options.emptyDatabaseUrl });
  await fullClient.connect();
  await emptyClient.connect();
  try {
    const empty = await startSide(options, options.emptyDatabaseUrl, 'empty');
    sides.push(empty);
    const full = await startSide(options, options.fullDatabaseUrl, 'full');
    sides.push(full);
    // A first round on each warms its stack up (JIT, pools, the planner's caches).
    await measureAtSize(options, empty, 'warm-up, empty side');
    await measureAtSize(options, full, 'warm-up, full side');
    await fullClient.query('TRUNCATE tasks, task_events');
    const { fillSeconds, sizes } = await fillTable(fullClient, options);
    const rounds: AtSizeResult['rounds'] = [];
    const roundCount = Math.max(2, Math.ceil(options.rounds / 2) * 2);
    // A pause as long as the warm-up before each measurement, so the last one's aftermath is over.
    const settleMs = options.warmupS * 1_000;
    for (let round = 1; round <= roundCount; round++) {
      // Each round starts from an empty table on the empty side: its rounds' creates stay.
      await emptyClient.query('TRUNCATE tasks, task_events');
      const measureEmpty = async () => {
        await sleep(settleMs);
        return measureAtSize(options, empty, `round ${round}, empty table`);
      };
      const measureFull = async () => {
        await sleep(settleMs);
        return measureAtSize(options, full, `round ${round}, ${options.rows} rows`);
      };
      if (round % 2 === 1) {
        const emptyFigures = await measureEmpty();
        rounds.push({ empty: emptyFigures, full: await measureFull() });
      } else {
        const fullFigures = await measureFull();
        rounds.push({ empty: await measureEmpty(), full: fullFigures });
      }
    }
    await stopStacks();
    await addSweeperWork(fullClient);
    const plans = await explainAtSize(fullClient);
    for (const plan of plans)
      options.log(
        `plan of ${plan.name}: ${plan.indexDriven ? 'index-driven' : 'SEQUENTIAL SCAN'}, ${plan.milliseconds.toFixed(2)} ms`,
      );
    const createRatios = rounds.map((r) => r.full.createP99Ms / r.empty.createP99Ms);
    const getRatios = rounds.map((r) => r.full.getRequestsPerS / r.empty.getRequestsPerS);
    options.log(
      `full ÷ empty per round: create p99 ${createRatios.map((x) => x.toFixed(2)).join(', ')}; tasks/get ${getRatios.map((x) => x.toFixed(2)).join(', ')}; order-paired median: ${pairedOrderRatio(createRatios).toFixed(2)} and ${pairedOrderRatio(getRatios).toFixed(2)}`,
    );
    return {
      rows: options.rows,
      fillSeconds,
      tableBytes: Number(sizes[0]!.heap),
      indexBytes: Number(sizes[0]!.indexes),
      rounds,
      empty: medianFigures(rounds.map((r) => r.empty)),
      full: medianFigures(rounds.map((r) => r.full)),
      createP99Ratio: pairedOrderRatio(createRatios),
      getRatio: pairedOrderRatio(getRatios),
      plans,
    };
  } finally {
    await fullClient.end();
    await emptyClient.end();
    await stopStacks();
  }
}
