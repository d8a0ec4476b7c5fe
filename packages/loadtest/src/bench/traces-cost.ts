import { startOtlpReceiver } from '@mcp-tasks/testing';
import { startBenchStack, type StackCostOptions } from './bench-stack.js';
import { runEndToEnd, type EndToEndResult } from './end-to-end.js';

const log = (line: string) => console.error(`[bench] ${line}`);

/** The e2e-traces figure: the same end-to-end run with tracing off and on, taken in turns. */
export interface TracesCostResult {
  off: EndToEndResult[];
  on: EndToEndResult[];
}

const ROUNDS = 2;

/**
 * What OpenTelemetry tracing costs (issue 28): the one-step end-to-end run on a fresh 1 + 1 stack
 * with tracing off, then on (every span sampled, exported as http/protobuf to the harness's OTLP
 * receiver in this process, which counts and drops them), alternating ROUNDS times so a slow
 * spell of the shared machine falls on both sides. CPU per task is the gateways' and workers'.
 */
export async function runTracesCost(options: StackCostOptions): Promise<TracesCostResult> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  const result: TracesCostResult = { off: [], on: [] };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
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
          const run = await runEndToEnd({ ...options, stack });
          log(
            `(e) tracing ${side}, round ${round + 1}: ${run.tasksPerS.toFixed(1)} tasks/s, CPU ms/task gateway ${run.gatewayCpuMsPerTask.toFixed(2)} worker ${run.workerCpuMsPerTask.toFixed(2)}`,
          );
          result[side].push(run);
        } finally {
          await stack.stop();
        }
      }
    }
    log(`OTLP receiver took ${receiver.spanCount()} spans`);
    return result;
  } finally {
    await receiver.close();
  }
}
