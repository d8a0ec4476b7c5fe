import { buildStalePackages } from '@mcp-tasks/stack';
import { postgresBaseUrl, repoRoot } from '@mcp-tasks/testing';
import { REALISTIC_TOOL_MODULE } from '@mcp-tasks/tools/bench';
import { startProbeStack } from '../bench/probe-stack.js';
import { runEndToEnd } from '../bench/end-to-end.js';
import { realisticLifecycle } from '../bench/realistic-mix.js';

/** The bench's two end-to-end lines at 1 gateway + 1 worker, measured in this run. */
export interface EndToEndRates {
  /** Line (e): the one-step no-input task. */
  noInput: number;
  /** The realistic mix: MRTR round, input pause answered, three steps, a watcher on 1 in 3. */
  realistic: number;
}

/**
 * `pnpm bench`'s end-to-end lines (the no-input task and the realistic mix), measured here on a
 * scratch database before the soak, so the soak's rate is a share of this run's own.
 */
export async function measureEndToEndRates(options: {
  durationS: number;
  warmupS: number;
  concurrency: number;
  log: (line: string) => void;
}): Promise<EndToEndRates> {
  await buildStalePackages(repoRoot, options.log);
  const probe = await startProbeStack('soak_calibrate', 1, {
    workerConcurrency: options.concurrency,
    env: { MCP_TOOL_MODULES: REALISTIC_TOOL_MODULE },
  });
  try {
    const endToEnd = async (lifecycle?: typeof realisticLifecycle) =>
      (
        await runEndToEnd({
          stack: probe.stack,
          databaseUrl: probe.database.connectionString,
          statsUrl: await postgresBaseUrl(),
          databaseName: probe.database.name,
          redisUrl: probe.redisUrl,
          concurrency: options.concurrency,
          durationS: options.durationS,
          warmupS: options.warmupS,
          lifecycle,
        })
      ).tasksPerS;
    return { noInput: await endToEnd(), realistic: await endToEnd(realisticLifecycle) };
  } finally {
    await probe.close();
  }
}
