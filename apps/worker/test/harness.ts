import { createTaskQueue, type TaskQueue } from '@mcp-tasks/queue';
import {
  createDb,
  createTask,
  createTaskService,
  getTask,
  migrateToLatest,
  type Db,
  type TaskService,
} from '@mcp-tasks/store';
import { newTaskId, type JsonObject, type Task, type TaskOwner } from '@mcp-tasks/tasks';
import {
  createTestDatabase,
  createTestRedis,
  launchWorker,
  type LaunchedProcess,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { TOOL_PACKS, createToolCatalogue } from '@mcp-tasks/tools';
import { Redis } from 'ioredis';
import pg from 'pg';
import { parseEnv } from '../src/env.js';
import { createLogger } from '../src/logger.js';
import { createWorker, type Worker } from '../src/worker.js';

export const OWNER: TaskOwner = { tenant: 'tenant-a', principal: 'alice' };
const catalogue = createToolCatalogue({ packs: TOOL_PACKS });

/** Test-speed settings: short leases and sweeps, quick report sections. */
export const FAST_ENV = {
  LEASE_MS: '2000',
  // The gateways' create window, and so the sweeper's grace floor: 2 × 500 + 1000 = LEASE_MS.
  MCP_VISIBILITY_TIMEOUT_MS: '500',
  SWEEP_INTERVAL_MS: '300',
  REPORT_STEP_MS: '150',
  MAX_ATTEMPTS: '3',
  WORKER_CONCURRENCY: '4',
  SHUTDOWN_GRACE_MS: '2000',
};

export interface Harness {
  database: TestDatabase;
  redis: TestRedis;
  db: Db;
  queue: TaskQueue;
  service: TaskService;
  admin: Redis;
  workers: WorkerProcess[];
  startWorker(env?: Record<string, string>): Promise<WorkerProcess>;
  /**
   * A worker in this process, built from the same environment as startWorker's through the real
   * parser and createWorker, but not started (nothing consumes the queue); closed by close().
   */
  buildWorker(env?: Record<string, string>): Promise<Worker>;
  createTask(toolName: string, args: JsonObject, ttlMs?: number | null): Promise<Task>;
  /** Commits a task without waking anyone, for tests that drive the runner or sweeper directly. */
  insertTask(toolName: string, args: JsonObject): Promise<Task>;
  task(taskId: string): Promise<Task>;
  waitFor(taskId: string, done: (task: Task) => boolean, timeoutMs?: number): Promise<Task>;
  /** Raw SQL on the test database, for setting up conditions no API produces (e.g. corruption). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** SIGTERM every worker started so far and forget them. */
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export interface WorkerProcess {
  id: string;
  port: number;
  process: LaunchedProcess;
  /** One counter or gauge sample from /metrics (summed over label sets matching `labels`). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

export async function createHarness(label: string): Promise<Harness> {
  const database = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  const db = createDb({ connectionString: database.connectionString, max: 4 });
  await migrateToLatest(db);
  const queue = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
  const service = createTaskService({ db, wakeUpQueue: queue });
  const admin = new Redis(redis.url);
  const workers: WorkerProcess[] = [];
  const built: Worker[] = [];
  /** What every worker of this harness reads: its database and queue, test-speed settings. */
  const workerEnv = (extra: Record<string, string>): Record<string, string> => ({
    DATABASE_URL: database.connectionString,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    ...FAST_ENV,
    ...extra,
  });

  const harness: Harness = {
    database,
    redis,
    db,
    queue,
    service,
    admin,
    workers,
    async startWorker(env = {}) {
      const {
        id,
        port,
        process: launched,
      } = await launchWorker({
        env: workerEnv({}),
        id: (metricsPort) => `w${workers.length + 1}-${metricsPort}`,
        overrides: env,
        readyTimeoutMs: 30_000,
      });
      const worker: WorkerProcess = {
        id,
        port,
        process: launched,
        async metric(name, labels = {}) {
          const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          let total = 0;
          for (const line of body.split('\n')) {
            if (!line.startsWith(name)) continue;
            const match = /^([a-z_]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
            if (match?.[1] !== name) continue;
            const labelText = match[2] ?? '';
            if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) {
              total += Number(match[3]);
            }
          }
          return total;
        },
      };
      workers.push(worker);
      return worker;
    },
    async buildWorker(env = {}) {
      const config = parseEnv(
        workerEnv({ METRICS_PORT: '0', WORKER_ID: `in-process-${built.length + 1}`, ...env }),
      );
      const worker = await createWorker({
        config,
        logger: createLogger({ level: config.logLevel, workerId: config.workerId }),
      });
      built.push(worker);
      return worker;
    },
    async createTask(toolName, args, ttlMs = null) {
      const tool = catalogue.get(toolName);
      if (tool?.task === undefined) throw new Error(`no task tool ${toolName}`);
      return service.createAndWake({
        id: newTaskId(),
        owner: OWNER,
        operation: { method: 'tools/call', toolName, arguments: args },
        ttlMs,
        pollIntervalMs: 500,
        statusMessage: tool.task.initialStatusMessage,
      });
    },
    async insertTask(toolName, args) {
      const { task } = await createTask(db, {
        id: newTaskId(),
        owner: OWNER,
        operation: { method: 'tools/call', toolName, arguments: args },
        ttlMs: null,
        pollIntervalMs: null,
        statusMessage: null,
      });
      return task;
    },
    async task(taskId) {
      const task = await getTask(db, taskId);
      if (task === undefined) throw new Error(`task ${taskId} is gone`);
      return task;
    },
    async waitFor(taskId, done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const task = await harness.task(taskId);
        if (done(task)) return task;
        if (Date.now() > deadline) {
          throw new Error(
            `task ${taskId} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(
              {
                status: task.status,
                statusMessage: task.statusMessage,
                checkpoint: task.checkpoint,
                lease: task.lease,
              },
            )}\n${workers.map((w) => `--- ${w.id}\n${w.process.output().slice(-3000)}`).join('\n')}`,
          );
        }
        await sleep(50);
      }
    },
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: database.connectionString });
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    async stopWorkers() {
      await Promise.all(workers.map((w) => w.process.stop(5_000)));
      workers.length = 0;
    },
    async close() {
      await harness.stopWorkers();
      await Promise.all(built.map((worker) => worker.close()));
      await queue.close();
      const keys = await admin.keys(`${redis.prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
      await db.destroy();
      await database.drop();
    },
  };
  return harness;
}

export const isTerminal = (task: Task): boolean =>
  task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';

export const accept = (content: JsonObject): JsonObject => ({ action: 'accept', content });
