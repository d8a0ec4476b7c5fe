/**
 * CPU per task of two builds' gateway + worker at a fixed arrival rate, in alternating pairs on
 * fresh 1 + 1 stacks (fixed-rate-cpu.ts), e.g. this checkout with tracing off against the code
 * before tracing (issue 28). Run through scripts/bench/tracing-off-ab.sh, which exports and builds
 * the other commit; by hand:
 *
 *   pnpm exec tsx --conditions=@mcp-tasks/source tooling/loadtest/src/bench/cpu-ab.ts \
 *     --baseline-root /tmp/mcp-tasks-ab-f77eb6e8bc79 --baseline-name f77eb6e
 *
 * Each side has a scratch database migrated by its own tree's migrator (`packages/store/dist/
 * cli/migrate.js`: an older build need not run on a newer schema) and a Redis prefix of its own.
 * The load, the completion watcher and the CPU samples are this checkout's, the same for both.
 * The order within a pair swaps every pair (A B, B A, …), so drift over the run falls evenly;
 * `--together` runs both sides of each pair at the same time instead (two stacks, each at the
 * rate): on a shared machine whose load changes from minute to minute, both then see the same.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildStalePackages } from '@mcp-tasks/stack';
import {
  createTestDatabase,
  createTestRedis,
  repoRoot,
  type TestDatabase,
} from '@mcp-tasks/testing';
import { Command } from 'commander';
import { positiveNumber } from '../option-parsers.js';
import { pairedCpuTable } from './bench-report.js';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { deleteRedisPrefix } from './cleanup.js';
import { setEventTriggers } from './events-cost.js';
import { median, pairedRatios } from './cpu-per-task.js';
import { fixedRateLine, runFixedRateCpu, type FixedRateCpuResult } from './fixed-rate-cpu.js';

interface AbOptions {
  baselineRoot: string;
  baselineName: string;
  candidateRoot?: string;
  candidateName?: string;
  pairs: number;
  rate: number;
  duration: number;
  warmup: number;
  concurrency: number;
  together: boolean;
  baselineWithoutHistory: boolean;
  withPostgres: boolean;
}

const log = (line: string) => console.error(`[ab] ${line}`);

interface Side {
  name: string;
  root: string;
  database?: TestDatabase;
  redisPrefix: string;
  runs: FixedRateCpuResult[];
}

async function migrateWith(root: string, databaseUrl: string): Promise<void> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, 'packages/store/dist/cli/migrate.js')],
    { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, DATABASE_DIRECT_URL: '' } },
  );
  log(`${root}: ${stdout.trim()}`);
}

/** The pairs, in turns (the order swapping every pair) or both sides at once. */
async function runPairs(
  options: AbOptions,
  sides: [Side, Side],
  redisUrl: string,
  stacks: BenchStack[],
): Promise<void> {
  const start = (side: Side) =>
    startBenchStack({
      databaseUrl: side.database!.connectionString,
      redisUrl,
      redisPrefix: side.redisPrefix,
      gateways: 1,
      workers: 1,
      workerConcurrency: options.concurrency,
      appsRoot: side.root,
    }).then((stack) => {
      stacks.push(stack);
      return stack;
    });
  const measure = async (side: Side, stack: BenchStack, pair: number) => {
    const run = await runFixedRateCpu({
      stack,
      databaseUrl: side.database!.connectionString,
      ratePerS: options.rate,
      durationS: options.duration,
      warmupS: options.warmup,
      postgresCpu: options.withPostgres,
    });
    log(`${side.name}, pair ${pair + 1}: ${fixedRateLine(run)}`);
    side.runs.push(run);
  };
  const stopAll = async () => {
    await Promise.allSettled(stacks.map((stack) => stack.stop()));
    stacks.length = 0;
  };
  for (let pair = 0; pair < options.pairs; pair += 1) {
    try {
      if (options.together) {
        const both = await Promise.all(sides.map(start));
        await Promise.all(sides.map((side, i) => measure(side, both[i]!, pair)));
      } else {
        const order = pair % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
        for (const side of order) {
          await measure(side, await start(side), pair);
          await stopAll();
        }
      }
    } finally {
      await stopAll();
    }
  }
}

/** The paired table and the median ratio of the CPU per task. */
function report(options: AbOptions, sides: [Side, Side]): void {
  const [a, b] = sides;
  console.log(
    pairedCpuTable(
      `one-step task at ${options.rate}/s, 1 gateway + 1 worker${options.together ? ' (both sides at once)' : ''}`,
      [a.name, b.name],
      a.runs,
      b.runs,
    ).toString(),
  );
  const perTask = (runs: FixedRateCpuResult[]) =>
    runs.map((x) => x.cpuMsPerTask + (options.withPostgres ? (x.postgresCpuMsPerTask ?? NaN) : 0));
  const ratio = pairedRatios(perTask(a.runs), perTask(b.runs));
  console.log(
    `CPU ms per task, gateway + worker${options.withPostgres ? ' + Postgres backends' : ''}: ${a.name} ${median(perTask(a.runs)).toFixed(3)}, ${b.name} ${median(perTask(b.runs)).toFixed(3)}; ${b.name} ÷ ${a.name} per pair ${ratio.ratios.map((r) => r.toFixed(3)).join(', ')}: median ${ratio.median.toFixed(3)} (${ratio.min.toFixed(3)}–${ratio.max.toFixed(3)})`,
  );
}

async function ab(options: AbOptions): Promise<void> {
  const candidateRoot = resolve(options.candidateRoot ?? repoRoot);
  if (options.candidateRoot === undefined) await buildStalePackages(repoRoot, log);
  const redis = await createTestRedis('ab');
  const sides: [Side, Side] = [
    {
      name: options.baselineName,
      root: resolve(options.baselineRoot),
      redisPrefix: `${redis.prefix}-a`,
      runs: [],
    },
    {
      name: options.candidateName ?? 'this checkout',
      root: candidateRoot,
      redisPrefix: `${redis.prefix}-b`,
      runs: [],
    },
  ];
  const stacks: BenchStack[] = [];
  let cleaned: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaned ??= (async () => {
      await Promise.allSettled(stacks.map((stack) => stack.stop()));
      for (const side of sides) {
        await side.database?.drop();
        await deleteRedisPrefix(redis.url, side.redisPrefix);
      }
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanUp().finally(() => process.exit(130));
    });
  try {
    for (const side of sides) {
      side.database = await createTestDatabase('ab');
      await migrateWith(side.root, side.database.connectionString);
    }
    if (options.baselineWithoutHistory)
      await setEventTriggers(sides[0].database!.connectionString, false);
    log(
      `${options.pairs} pairs (${options.together ? 'both sides at once' : 'in turns'}) at ${options.rate}/s, ${options.duration} s after ${options.warmup} s warm-up, 1 gateway + 1 worker: ${sides[0].name} (${sides[0].root}) vs ${sides[1].name} (${sides[1].root})`,
    );
    await runPairs(options, sides, redis.url, stacks);
    report(options, sides);
  } finally {
    await cleanUp();
  }
}

const program = new Command('cpu-ab')
  .description(
    "CPU per task of two builds' gateway + worker at a fixed rate, in alternating pairs on fresh 1 + 1 stacks.",
  )
  .requiredOption('--baseline-root <dir>', 'a tree with the baseline installed and built')
  .option('--baseline-name <name>', 'its label in the output', 'baseline')
  .option('--candidate-root <dir>', 'another built tree to measure instead of this checkout')
  .option('--candidate-name <name>', 'its label in the output')
  .option('--pairs <n>', 'paired rounds', positiveNumber, 5)
  .option('--rate <n>', 'tasks per second sent, well under saturation', positiveNumber, 200)
  .option('--duration <s>', 'measured seconds per round', positiveNumber, 20)
  .option('--warmup <s>', 'warm-up seconds before each measured window', positiveNumber, 5)
  .option('--concurrency <n>', "each worker's concurrency", positiveNumber, 32)
  .option(
    '--baseline-without-history',
    "disable the task history's triggers (task_events) on the baseline's database: with --baseline-root at this checkout, what the history costs end to end",
    false,
  )
  .option(
    '--with-postgres',
    "add the Postgres backends' CPU (a server on this host) to the compared figure",
    false,
  )
  .option(
    '--together',
    'run both sides of a pair at once (each at --rate), so a slow spell of a shared machine falls on both at the same moment',
    false,
  )
  .action(ab);

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
