/**
 * The sweeper's statements on a backlog, batch sizes in turns (see sweep-throughput.ts):
 *
 *   ROWS=150000 BATCHES=1000,5000 HOLD_SNAPSHOT=1 ROUNDS=2 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/sweep-throughput-probe.ts
 */
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase } from '@mcp-tasks/testing';
import { describeVariant, runSweepThroughput } from './sweep-throughput.js';

const rows = Number(process.env.ROWS ?? 150_000);
const batchSizes = (process.env.BATCHES ?? '1000,5000').split(',').map(Number);
const variants = batchSizes.flatMap((batchSize) => [
  { batchSize, resume: false },
  { batchSize, resume: true },
]);
const rounds = Number(process.env.ROUNDS ?? 2);
const database = await createTestDatabase('sweep_probe');
try {
  const db = createDb({ connectionString: database.connectionString, statementTimeoutMs: 0 });
  await migrateToLatest(db);
  await db.destroy();
  const results = await runSweepThroughput({
    connectionString: database.connectionString,
    rows,
    variants,
    rounds,
    holdSnapshot: process.env.HOLD_SNAPSHOT === '1',
    log: (line) => console.error(line),
  });
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  for (const result of results)
    console.log(
      `${describeVariant(result)}: expire ${Math.round(median(result.expireRowsPerSecond))} rows/s, ` +
        `delete ${Math.round(median(result.deleteRowsPerSecond))} rows/s (median of ${rounds}, ${rows} rows)`,
    );
} finally {
  await database.drop();
}
