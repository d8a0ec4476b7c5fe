import { buildStalePackages } from '@mcp-tasks/stack';
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase, createTestRedis, postgresBaseUrl, repoRoot } from '@mcp-tasks/testing';
import { startBenchStack } from '../bench/bench-stack.js';
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
  const database = await createTestDatabase('soak_calibrate');
  const redis = await createTestRedis('soak-calibrate');
  try {
    const db = createDb({ connectionString: database.connectionString });
    await migrateToLatest(db);
    await db.destroy();
    const stack = await startBenchStack({
      databaseUrl: database.connectionString,
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      gateways: 1,
      workers: 1,
      workerConcurrency: options.concurrency,
    });
    try {
      const result = await runEndToEnd({
        stack,
        databaseUrl: database.connectionString,
        statsUrl: await postgresBaseUrl(),
        databaseName: database.name,
        redisUrl: redis.url,
        concurrency: options.concurrency,
        durationS: options.durationS,
        warmupS: options.warmupS,
      });
      return result.tasksPerS;
    } finally {
      await stack.stop();
    }
  } finally {
    await redis.deleteKeys();
    await database.drop();
  }
}
