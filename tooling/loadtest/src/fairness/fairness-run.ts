import { setTimeout as sleep } from 'node:timers/promises';
import { buildRequest, DEFAULT_CAPABILITIES } from '@mcp-tasks/client';
import { PROTOCOL_VERSION } from '@mcp-tasks/protocol';
import { startStack, type StackHandle } from '@mcp-tasks/stack';
import { countTasksInFlight, createDb } from '@mcp-tasks/store';
import { createTestDatabase, createTestRedis } from '@mcp-tasks/testing';

/**
 * `pnpm loadtest fairness`: the measurement of issue 24 item 7. On 1 gateway and 1 worker
 * (WORKER_CONCURRENCY 8 by default), tenant "acme" queues a backlog of `slow_compute` tasks,
 * then tenant "globex" creates one shorter task; the figure is how long after its create that
 * one completed, against the bound. First in, first out it would wait out the whole backlog.
 */
export interface FairnessOptions {
  backlog: number;
  backlogSeconds: number;
  singleSeconds: number;
  workerConcurrency: number;
  boundMs: number;
  log(line: string): void;
}

export interface FairnessResult {
  /** globex's create → completed, in ms (Infinity: not within the bound). */
  singleMs: number;
  /** acme's backlog still unfinished when globex's task completed. */
  backlogLeft: number;
  /** How long queueing the backlog took (the create rate limit paces it). */
  queueMs: number;
  rateLimited: number;
  /** The worker's claims that took a fairer task than their wake-up named. */
  fairerClaims: number;
}

const FRAMING = {
  protocolVersion: PROTOCOL_VERSION,
  clientCapabilities: DEFAULT_CAPABILITIES,
  clientInfo: { name: 'mcp-tasks-fairness', version: '1.0.0' },
};

interface Reply {
  status: number;
  result?: Record<string, unknown>;
  error?: { data?: { reason?: string; retryAfterMs?: number } };
}

/** The one gateway's base URL (a stack's gateways always have one). */
function gatewayOf(stack: StackHandle): string {
  const url = stack.gateways[0]?.url;
  if (url === undefined) throw new Error('the stack has no gateway');
  return url;
}

async function call(
  gatewayUrl: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<Reply> {
  const built = buildRequest(method, params, { id: 1, framing: FRAMING, token });
  const response = await fetch(`${gatewayUrl}/mcp`, {
    method: 'POST',
    headers: built.headers,
    body: JSON.stringify(built.body),
  });
  const body = (await response.json()) as Omit<Reply, 'status'>;
  return { status: response.status, ...body };
}

/** Creates one task, waiting out `tenant_rate_limited` refusals as told; counts them. */
async function createTask(
  stack: StackHandle,
  token: string,
  seconds: number,
  counts: { rateLimited: number },
): Promise<string> {
  for (;;) {
    const reply = await call(gatewayOf(stack), token, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds },
    });
    const taskId = reply.result?.taskId;
    if (typeof taskId === 'string') return taskId;
    if (reply.error?.data?.reason !== 'tenant_rate_limited')
      throw new Error(`create failed (${reply.status}): ${JSON.stringify(reply.error)}`);
    counts.rateLimited += 1;
    await sleep(reply.error.data.retryAfterMs ?? 100);
  }
}

async function statusOf(stack: StackHandle, token: string, taskId: string): Promise<string> {
  const reply = await call(gatewayOf(stack), token, 'tasks/get', { taskId });
  return String(reply.result?.status);
}

async function workerMetric(stack: StackHandle, name: string, labels: string): Promise<number> {
  const health = new URL(stack.workers[0]!.readyUrl);
  const body = await (await fetch(new URL('/metrics', health))).text();
  const line = body.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

export async function runFairness(options: FairnessOptions): Promise<FairnessResult> {
  const database = await createTestDatabase('fairness');
  const redis = await createTestRedis('fairness');
  let stack: StackHandle | undefined;
  try {
    stack = await startStack({
      gateways: 1,
      workers: 1,
      databaseUrl: database.connectionString,
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      proxyPort: 0,
      env: { WORKER_CONCURRENCY: String(options.workerConcurrency), LOG_LEVEL: 'warn' },
    });
    const heavy = stack.tokens.alice!;
    const light = stack.tokens.mallory!;
    const counts = { rateLimited: 0 };
    options.log(
      `queueing ${options.backlog} slow_compute {seconds: ${options.backlogSeconds}} for tenant acme (1 gateway, 1 worker, WORKER_CONCURRENCY=${options.workerConcurrency})`,
    );
    const queueStarted = Date.now();
    const clients = 16;
    let next = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < options.backlog) {
          next += 1;
          await createTask(stack!, heavy, options.backlogSeconds, counts);
        }
      }),
    );
    const queueMs = Date.now() - queueStarted;
    options.log(
      `backlog queued in ${(queueMs / 1_000).toFixed(1)} s (${counts.rateLimited} creates told to wait by TENANT_CREATE_RATE)`,
    );
    const createdAt = Date.now();
    const single = await createTask(stack, light, options.singleSeconds, counts);
    let singleMs = Infinity;
    while (Date.now() - createdAt <= options.boundMs * 4) {
      if ((await statusOf(stack, light, single)) === 'completed') {
        singleMs = Date.now() - createdAt;
        break;
      }
      await sleep(100);
    }
    const db = createDb({ connectionString: database.connectionString, max: 1 });
    const left = await countTasksInFlight(db, ['acme'], options.backlog + 1).finally(() =>
      db.destroy(),
    );
    return {
      singleMs,
      backlogLeft: left.get('acme') ?? 0,
      queueMs,
      rateLimited: counts.rateLimited,
      fairerClaims: await workerMetric(stack, 'mcp_worker_claims_total', 'task="fairer"'),
    };
  } finally {
    await stack?.stop(10_000);
    await redis.deleteKeys();
    await database.drop().catch(() => undefined);
  }
}
