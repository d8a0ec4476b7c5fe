import { buildStalePackages } from '@mcp-tasks/stack';
import { postgresBaseUrl, repoRoot } from '@mcp-tasks/testing';
import { startProbeStack } from '../bench/probe-stack.js';
import { runEndToEnd } from '../bench/end-to-end.js';

/**
 * The bench's end-to-end figure at 1 gateway + 1 worker (`pnpm bench`'s line (e)), measured here
 * on a scratch database before the soak, so the soak's rate is a share of this run's own.
 */
export async function measureEndToEndRate(options: {
  durationS: number;
  warmupS: number;
  concurrency: number;
  log: (line: string) => void;
}): Promise<number> {
  await buildStalePackages(repoRoot, options.log);
  const probe = await startProbeStack('soak_calibrate', 1, {
    workerConcurrency: options.concurrency,
  });
  try {
    const result = await runEndToEnd({
      stack: probe.stack,
      databaseUrl: probe.database.connectionString,
      statsUrl: await postgresBaseUrl(),
      databaseName: probe.database.name,
      redisUrl: probe.redisUrl,
      concurrency: options.concurrency,
      durationS: options.durationS,
      warmupS: options.warmupS,
    });
    return result.tasksPerS;
  } finally {
    await probe.close();
  }
}
