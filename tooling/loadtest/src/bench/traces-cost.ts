import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase, startOtlpReceiver, type TestDatabase } from '@mcp-tasks/testing';
import { startBenchStack, type BenchStack, type StackCostOptions } from './bench-stack.js';
import { median, pairedRatios, type PairedRatios } from './cpu-per-task.js';
import { fixedRateLine, runFixedRateCpu, type FixedRateCpuResult } from './fixed-rate-cpu.js';

const log = (line: string) => console.error(`[bench] ${line}`);

/** The e2e-traces figure: CPU per task at a fixed rate with tracing off and on, in pairs. */
export interface TracesCostResult {
  ratePerS: number;
  /** Both sides of each pair ran at the same time (--together), else off then on. */
  together: boolean;
  off: FixedRateCpuResult[];
  on: FixedRateCpuResult[];
  /** Each pair's on ÷ off of gateway + worker CPU per task, their median and spread. */
  ratio: PairedRatios;
}

const SIDES = ['off', 'on'] as const;
type Side = (typeof SIDES)[number];

/**
 * What OpenTelemetry tracing costs (issue 28): CPU per task of the one-step task sent at a fixed
 * rate (fixed-rate-cpu.ts) to a fresh 1 + 1 stack with tracing off, then to another with tracing
 * on (every span sampled, exported as http/protobuf to the harness's OTLP receiver in this
 * process, which counts and drops them): off, on, off, on…, `pairs` times, so a slow spell of
 * the shared machine falls on both sides of a pair. `together` runs both stacks of a pair at the
 * same time instead, each at the rate, on a database and Redis prefix of its own (two workers on
 * one queue would take each other's tasks): a machine whose load changes from minute to minute
 * then weighs on both sides alike.
 */
export async function runTracesCost(
  options: StackCostOptions & { ratePerS: number; pairs: number; together: boolean },
): Promise<TracesCostResult> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  let traced: TestDatabase | undefined;
  const runs: Record<Side, FixedRateCpuResult[]> = { off: [], on: [] };
  try {
    if (options.together) {
      traced = await createTestDatabase('bench_traced');
      const db = createDb({ connectionString: traced.connectionString });
      await migrateToLatest(db);
      await db.destroy();
    }
    const databaseOf = (side: Side) =>
      side === 'on' && traced !== undefined ? traced.connectionString : options.databaseUrl;
    const start = async (side: Side) => {
      const stack = await startBenchStack({
        ...options.stackOptions,
        ...(side === 'on' && traced !== undefined
          ? {
              databaseUrl: traced.connectionString,
              redisPrefix: `${options.stackOptions.redisPrefix}-traced`,
            }
          : {}),
        gateways: 1,
        workers: 1,
        env:
          side === 'on'
            ? {
                OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
                OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
              }
            : {},
      });
      options.stacks.push(stack);
      return stack;
    };
    const measure = async (side: Side, stack: BenchStack, pair: number) => {
      const run = await runFixedRateCpu({ ...options, databaseUrl: databaseOf(side), stack });
      log(`(e) tracing ${side}, pair ${pair + 1}, ${options.ratePerS}/s: ${fixedRateLine(run)}`);
      runs[side].push(run);
    };
    for (let pair = 0; pair < options.pairs; pair += 1) {
      if (options.together) {
        const stacks = await Promise.all(SIDES.map(start));
        try {
          await Promise.all(SIDES.map((side, i) => measure(side, stacks[i]!, pair)));
        } finally {
          await Promise.all(stacks.map((stack) => stack.stop()));
        }
      } else {
        for (const side of SIDES) {
          const stack = await start(side);
          try {
            await measure(side, stack, pair);
          } finally {
            await stack.stop();
          }
        }
      }
    }
    log(`OTLP receiver took ${receiver.spanCount()} spans`);
    const perTask = (xs: FixedRateCpuResult[]) => xs.map((x) => x.cpuMsPerTask);
    const ratio = pairedRatios(perTask(runs.off), perTask(runs.on));
    log(
      `(e) tracing at ${options.ratePerS}/s (${options.together ? 'both sides at once' : 'in turns'}), CPU ms/task gateway + worker: off ${median(perTask(runs.off)).toFixed(3)}, on ${median(perTask(runs.on)).toFixed(3)} (medians of ${options.pairs}); on ÷ off ${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})`,
    );
    return { ratePerS: options.ratePerS, together: options.together, ...runs, ratio };
  } finally {
    await receiver.close();
    await traced?.drop();
  }
}
