import { Redis } from 'ioredis';
import type { LaunchedProcess } from './processes.js';
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
} from './services.js';
import { launchTopology, type Topology } from './topology.js';

/**
 * One helper for a tool author's end-to-end test: a real gateway process and real worker
 * processes (from source, via launchProcess) on a fresh Postgres database and Redis prefix, both
 * loading the author's tool modules, and a small MCP client that speaks to the gateway over HTTP.
 */

const PROTOCOL_VERSION = '2026-07-28';
const CLIENT_CAPABILITIES = {
  elicitation: {},
  extensions: { 'io.modelcontextprotocol/tasks': {} },
};

export interface ToolStackOptions {
  /** Names the database and Redis prefix (for finding leftovers). */
  label: string;
  /** MCP_TOOL_MODULES for the gateway and every worker: package names or paths from the repo root. */
  toolModules: string[];
  /** MCP_TOOL_PACKS; default `reports` (the built-ins stay out of the author's way). */
  toolPacks?: string;
  /** Extra environment for every process (e.g. a tool's own settings). */
  env?: Record<string, string>;
  /** How many workers to start at once; default 1 (more with startWorker). */
  workers?: number;
}

export type JsonRecord = Record<string, unknown>;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC answer: exactly one of result and error. */
export interface RpcAnswer {
  httpStatus: number;
  result?: JsonRecord;
  error?: RpcError;
}

/** What a test adds to one request beyond the stack's own `_meta` and headers. */
export interface RpcExtras {
  meta?: JsonRecord;
  headers?: Record<string, string>;
}

export interface ToolStack {
  gatewayUrl: string;
  database: TestDatabase;
  redis: TestRedis;
  gateway: LaunchedProcess;
  workers: LaunchedProcess[];
  /** Each worker's metrics server (`/healthz`, `/metrics`), in the order of `workers`. */
  workerMetricsUrls: string[];
  /** Starts one more worker (same modules, plus `env`); resolves once it is ready. */
  startWorker(env?: Record<string, string>): Promise<LaunchedProcess>;
  /**
   * Any MCP request, as a client that declared elicitation and the Tasks extension; `extra` adds
   * keys to `params._meta` (e.g. `traceparent`) and HTTP headers.
   */
  rpc(method: string, params: JsonRecord, extra?: RpcExtras): Promise<RpcAnswer>;
  /** tools/call; answers the result (a task handle for task tools) or throws on a JSON-RPC error. */
  callTool(name: string, args: JsonRecord): Promise<JsonRecord>;
  getTask(taskId: string): Promise<JsonRecord>;
  /** tasks/update with these input responses. */
  answer(taskId: string, inputResponses: JsonRecord): Promise<JsonRecord>;
  cancel(taskId: string): Promise<JsonRecord>;
  /** Polls tasks/get until `done` holds (default: any terminal status). */
  waitForTask(
    taskId: string,
    done?: (task: JsonRecord) => boolean,
    timeoutMs?: number,
  ): Promise<JsonRecord>;
  /** Stops every process, drops the database and deletes the Redis prefix's keys. */
  stop(): Promise<void>;
}

export const isTerminalTask = (task: JsonRecord): boolean =>
  ['completed', 'failed', 'cancelled'].includes(task.status as string);

/** Test-speed worker settings: short leases and sweeps so a killed worker's task moves on soon. */
export const FAST_WORKER_ENV = {
  LEASE_MS: '2000',
  SWEEP_INTERVAL_MS: '300',
  SHUTDOWN_GRACE_MS: '2000',
  RETRY_BASE_DELAY_MS: '100',
};

export async function startToolStack(options: ToolStackOptions): Promise<ToolStack> {
  const database = await createTestDatabase(options.label);
  const redis = await createTestRedis(options.label);
  const topology = await launchToolTopology(toolStackEnv(options, database, redis), database);
  const gateway = topology.gateways[0]!.process;
  const gatewayUrl = topology.gateways[0]!.url;
  const workers: LaunchedProcess[] = [];
  const workerMetricsUrls: string[] = [];

  async function startWorker(env: Record<string, string> = {}): Promise<LaunchedProcess> {
    const worker = await topology.addWorker(env);
    workers.push(worker.process);
    workerMetricsUrls.push(worker.metricsUrl);
    return worker.process;
  }

  const rpc = gatewayRpc(gatewayUrl);
  async function ok(method: string, params: JsonRecord): Promise<JsonRecord> {
    const answer = await rpc(method, params);
    if (answer.error !== undefined || answer.result === undefined)
      throw new Error(`${method} failed (${answer.httpStatus}): ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  const stack: ToolStack = {
    gatewayUrl,
    database,
    redis,
    gateway,
    workers,
    workerMetricsUrls,
    startWorker,
    rpc,
    callTool: (name, args) => ok('tools/call', { name, arguments: args }),
    getTask: (taskId) => ok('tasks/get', { taskId }),
    answer: (taskId, inputResponses) => ok('tasks/update', { taskId, inputResponses }),
    cancel: (taskId) => ok('tasks/cancel', { taskId }),
    waitForTask: (taskId, done = isTerminalTask, timeoutMs = 30_000) =>
      waitForTask(stack, taskId, done, timeoutMs),
    stop: () => stopToolStack(topology, redis, database),
  };
  try {
    for (let i = 0; i < (options.workers ?? 1); i += 1) await startWorker();
  } catch (error) {
    await stack.stop();
    throw error;
  }
  return stack;
}

/** Every process's environment: the test's database and Redis prefix, the author's modules. */
function toolStackEnv(
  options: ToolStackOptions,
  database: TestDatabase,
  redis: TestRedis,
): Record<string, string> {
  return {
    DATABASE_URL: database.connectionString,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    MCP_TOOL_PACKS: options.toolPacks ?? 'reports',
    MCP_TOOL_MODULES: options.toolModules.join(','),
    // A short create window (gateway) and so a short sweeper grace floor (workers): 2 s.
    MCP_VISIBILITY_TIMEOUT_MS: '500',
    ...options.env,
  };
}

/** The gateway, healthy, and no worker yet; the database dropped if it cannot start. */
async function launchToolTopology(
  shared: Record<string, string>,
  database: TestDatabase,
): Promise<Topology> {
  try {
    return await launchTopology({
      gateways: 1,
      workers: 0,
      env: shared,
      // `env` may choose another auth mode (the stack's own rpc() sends no credentials).
      gatewayEnv: { MCP_AUTH: 'none', MCP_MIGRATE_ON_START: 'true', ...shared },
      workerEnv: FAST_WORKER_ENV,
      workerId: (index, metricsPort) => `stack-w${index + 1}-${metricsPort}`,
      readyTimeoutMs: 60_000,
      order: 'sequential',
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** `ToolStack.rpc` against the gateway at `gatewayUrl`, with its own request ids. */
function gatewayRpc(gatewayUrl: string): ToolStack['rpc'] {
  let nextId = 1;
  return async (method, params, extra = {}) => {
    const headers: Record<string, string> = {
      ...extra.headers,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
      'Mcp-Method': method,
    };
    const name = method === 'tools/call' ? params.name : params.taskId;
    if (typeof name === 'string') headers['Mcp-Name'] = name;
    const response = await fetch(`${gatewayUrl}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
            'io.modelcontextprotocol/clientCapabilities': CLIENT_CAPABILITIES,
            ...extra.meta,
          },
        },
      }),
    });
    const text = await response.text();
    // A JSON body, or an SSE stream whose last data line is the response.
    const payload = response.headers.get('content-type')?.includes('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .at(-1)
      : text;
    const message = JSON.parse(payload ?? 'null') as { result?: JsonRecord; error?: RpcError };
    return { httpStatus: response.status, ...message };
  };
}

/** Polls the stack's tasks/get until `done` holds; past the deadline, throws with the logs. */
async function waitForTask(
  stack: ToolStack,
  taskId: string,
  done: (task: JsonRecord) => boolean,
  timeoutMs: number,
): Promise<JsonRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await stack.getTask(taskId);
    if (done(task)) return task;
    if (Date.now() > deadline) {
      const logs = [stack.gateway, ...stack.workers]
        .map((p) => p.output().slice(-2000))
        .join('\n---\n');
      throw new Error(
        `task ${taskId} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(task)}\n${logs}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every process stopped, the prefix's keys deleted, the database dropped. */
async function stopToolStack(
  topology: Topology,
  redis: TestRedis,
  database: TestDatabase,
): Promise<void> {
  await topology.stop(5_000);
  const admin = new Redis(redis.url);
  try {
    const keys = await admin.keys(`${redis.prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  } finally {
    admin.disconnect();
  }
  await database.drop();
}
