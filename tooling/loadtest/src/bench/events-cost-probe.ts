/**
 * Line (g) of the bench under two schemas in turns (issue 27, migration 0024): each run on a fresh
 * scratch database migrated to the latest, or with 0024 undone (the schema before it), so its
 * cost is read as the difference of the two on the same shared machine in the same minutes.
 *
 *   pnpm exec tsx --conditions=@mcp-tasks/source tooling/loadtest/src/bench/events-cost-probe.ts [pairs] [seconds]
 */
import { createDb, migrateToLatest, MIGRATIONS, type Db } from '@mcp-tasks/store';
import { createTestDatabase } from '@mcp-tasks/testing';
import { describeServerCpu, runEventsCost } from './events-cost.js';

const pairs = Number(process.argv[2] ?? 3);
const durationS = Number(process.argv[3] ?? 5);
const undo0024 = (db: Db) => MIGRATIONS['0024_task_events_lighter_writes']!.down!(db);

for (let pair = 0; pair < pairs; pair++) {
  for (const schema of pair % 2 === 0 ? ['before 0024', '0024'] : ['0024', 'before 0024']) {
    const database = await createTestDatabase('bench_events_probe');
    try {
      const db = createDb({ connectionString: database.connectionString, statementTimeoutMs: 0 });
      await migrateToLatest(db);
      if (schema !== '0024') await undo0024(db);
      await db.destroy();
      const result = await runEventsCost({
        databaseUrl: database.connectionString,
        concurrency: 8,
        durationS,
        warmupS: 2,
        ...(schema === '0024' ? {} : { prepareTwin: undo0024 }),
      });
      console.log(
        `pair ${pair} ${schema}: ${result.on.toFixed(0)} vs ${result.off.toFixed(0)} lifecycles/s = ${result.ratio.toFixed(3)}; ${describeServerCpu(result)}`,
      );
    } finally {
      await database.drop();
    }
  }
}
