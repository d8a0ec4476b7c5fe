/**
 * Round trips per created task, counted rather than timed (so the figure does not depend on how
 * busy the machine is): Postgres statements sent by the task service (Kysely's query log, primary
 * and read pool apart), Redis commands (INFO commandstats of a private redis-server, so nothing
 * else is counted; commands run inside BullMQ's Lua scripts included), and Redis requests: socket
 * writes to it (ioredis writes a command, or a whole pipeline, at once; each waits for its reply). Creates go one at a
 * time, then 32 at once.
 *
 *   DATABASE_URL=… pnpm tsx --conditions=@mcp-tasks/source packages/queue/bench/count-create-round-trips.ts
 */
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb, createTaskService, migrateToLatest, type Db } from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase, freePort } from '@mcp-tasks/testing';
import { Redis } from 'ioredis';
import { createTaskQueue } from '../src/index.js';

const TASKS = 320;

/** Socket writes per remote port, counted in this process. */
const writes = new Map<number, number>();
// Wrapped, not called detached: the original runs with the socket as `this`.
// eslint-disable-next-line @typescript-eslint/unbound-method
const originalWrite = Socket.prototype.write;
Socket.prototype.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
  const port = this.remotePort;
  if (port !== undefined) writes.set(port, (writes.get(port) ?? 0) + 1);
  return originalWrite.apply(this, args);
} as Socket['write'];

function countingDb(connectionString: string): { db: Db; count: () => number; reset(): void } {
  let statements = 0;
  const db = createDb({
    connectionString,
    max: 10,
    log: (event) => {
      if (event.level === 'query') statements += 1;
    },
  });
  return { db, count: () => statements, reset: () => (statements = 0) };
}

async function redisCommands(admin: Redis): Promise<Record<string, number>> {
  const info = await admin.info('commandstats');
  const counts: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

async function main(): Promise<void> {
  const database = await createTestDatabase('roundtrips');
  const port = await freePort();
  const redisServer = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const redisUrl = `redis://127.0.0.1:${port}`;
  const admin = new Redis(redisUrl, { lazyConnect: true });
  admin.on('error', () => undefined);
  for (let i = 0; i < 50; i++) {
    try {
      await admin.connect();
      break;
    } catch {
      await sleep(100);
    }
  }
  const primary = countingDb(database.connectionString);
  const read = countingDb(database.connectionString);
  await migrateToLatest(primary.db);
  const queue = createTaskQueue({ redis: { url: redisUrl }, prefix: 'roundtrips' });
  try {
    for (const withReplica of [false, true]) {
      const service = createTaskService({
        db: primary.db,
        ...(withReplica ? { readDb: read.db } : {}),
        wakeUpQueue: queue,
      });
      const create = () =>
        service.createAndWake({
          id: newTaskId(),
          owner: { tenant: 'acme', principal: 'alice' },
          operation: { method: 'tools/call', toolName: 'failing_job', arguments: {} },
          ttlMs: 60_000,
          pollIntervalMs: 1_000,
          statusMessage: null,
        });
      await create(); // connections, scripts loaded
      for (const concurrency of [1, 32]) {
        primary.reset();
        read.reset();
        await admin.config('RESETSTAT');
        writes.clear();
        for (let done = 0; done < TASKS; done += concurrency) {
          await Promise.all(Array.from({ length: concurrency }, create));
        }
        const redisWrites = writes.get(port) ?? 0;
        const commands = await redisCommands(admin);
        delete commands.info;
        delete commands['config|resetstat'];
        const total = Object.values(commands).reduce((a, b) => a + b, 0);
        const perTask = (n: number) => (n / TASKS).toFixed(2);
        console.log(
          `${withReplica ? 'with read pool' : 'no replica    '} concurrency ${String(concurrency).padStart(2)}: ` +
            `Postgres statements/task primary ${perTask(primary.count())}, read pool ${perTask(read.count())}; ` +
            `Redis commands/task ${perTask(total)}; Redis requests (socket writes)/task ${perTask(redisWrites)}; Redis commands ${JSON.stringify(commands)}`,
        );
      }
    }
  } finally {
    await queue.close();
    admin.disconnect();
    await primary.db.destroy();
    await read.db.destroy();
    await database.drop();
    redisServer.kill();
  }
}

await main();
