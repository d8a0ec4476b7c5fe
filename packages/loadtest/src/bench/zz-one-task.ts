import { createTestDatabase } from '@mcp-tasks/testing';
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBenchStack } from './bench-stack.js';
import { createTaskRequest, sendMcp } from './mcp-requests.js';
import { startCompletionWatcher } from './completion-watcher.js';
const database = await createTestDatabase('tp3one');
const db = createDb({ connectionString: database.connectionString });
await migrateToLatest(db);
await db.destroy();
const stack = await startBenchStack({
  databaseUrl: database.connectionString,
  redisUrl: process.env.REDIS_URL!,
  redisPrefix: 'tp3one',
  gateways: Number(process.env.G ?? 1),
  workers: Number(process.env.W ?? 1),
  workerConcurrency: 32,
});
const watcher = startCompletionWatcher(database.connectionString);
try {
  await sleep(3000);
  console.log('MARK-START');
  await fetch('http://127.0.0.1:1/').catch(() => {});
  for (let i = 0; i < Number(process.env.N ?? 1); i++) {
    const created = await sendMcp(stack.gateways[0]!.url, createTaskRequest());
    await watcher.waitFor(created.taskId as string);
  }
  await sleep(500);
  console.log('MARK-END');
  if (process.env.IDLE) {
    await sleep(Number(process.env.IDLE));
    console.log('IDLE-END');
  }
} finally {
  await watcher.stop();
  await stack.stop();
  await database.drop();
}
