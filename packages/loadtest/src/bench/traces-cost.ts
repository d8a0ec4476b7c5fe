import { startOtlpReceiver } from '@mcp-tasks/testing';
import { startBenchStack, type StackCostOptions } from './bench-stack.js';
import { median, pairedRatios, type PairedRatios } from './cpu-per-task.js';
import { fixedRateLine, runFixedRateCpu, type FixedRateCpuResult } from './fixed-rate-cpu.js';

const log = (line: string) => console.error(`[bench] ${line}`);

/** The e2e-traces figure: CPU per task at a fixed rate with tracing off and on, in pairs. */
export interface TracesCostResult {
  ratePerS: number;
  off: FixedRateCpuResult[];
  on: FixedRateCpuResult[];
  /** Each pair's on ÷ off of gateway + worker CPU per task, their median and spread. */
  ratio: PairedRatios;
}

/**
 * What OpenTelemetry tracing costs (issue 28): CPU per task of the one-step task sent at a fixed
 * rate (fixed-rate-cpu.ts) to a fresh 1 + 1 stack with tracing off, then to another with tracing
 * on (every span sampled, exported as http/protobuf to the harness's OTLP receiver in this
 * process, which counts and drops them): off, on, off, on…, `pairs` times, so a slow spell of
 * the shared machine falls on both sides of a pair.
 */
export async function runTracesCost(
  options: StackCostOptions & { ratePerS: number; pairs: number },
): Promise<TracesCostResult> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  const runs: { off: FixedRateCpuResult[]; on: FixedRateCpuResult[] } = { off: [], on: [] };
  try {
    for (let pair = 0; pair < options.pairs; pair += 1) {
      for (const side of ['off', 'on'] as const) {
        const env: Record<string, string> =
          side === 'on'
            ? {
                OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
                OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
              }
            : {};
        const stack = await startBenchStack({
          ...options.stackOptions,
          gateways: 1,
          workers: 1,
          env,
        });
        options.stacks.push(stack);
        try {
          const run = await runFixedRateCpu({ ...options, stack });
          log(
            `(e) tracing ${side}, pair ${pair + 1}, ${options.ratePerS}/s: ${fixedRateLine(run)}`,
          );
          runs[side].push(run);
        } finally {
          await stack.stop();
        }
      }
    }
    log(`OTLP receiver took ${receiver.spanCount()} spans`);
    const perTask = (xs: FixedRateCpuResult[]) => xs.map((x) => x.cpuMsPerTask);
    const ratio = pairedRatios(perTask(runs.off), perTask(runs.on));
    log(
      `(e) tracing at ${options.ratePerS}/s, CPU ms/task gateway + worker: off ${median(perTask(runs.off)).toFixed(3)}, on ${median(perTask(runs.on)).toFixed(3)} (medians of ${options.pairs}); on ÷ off ${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})`,
    );
    return { ratePerS: options.ratePerS, ...runs, ratio };
  } finally {
    await receiver.close();
  }
}
