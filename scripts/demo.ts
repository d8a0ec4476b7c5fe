/**
 * `pnpm demo`: the product on one machine, as processes — two gateway replicas, two workers, one
 * Postgres database and a private Redis prefix — and a client that walks a large generate_report
 * through its whole life across both replicas: create on A, poll on B, answer its two input
 * requests one at a time, show that another tenant cannot see it, kill -9 the worker that holds
 * it mid-render, and read the result from the other replica once the surviving worker finished.
 *
 * Needs Postgres and Redis (DATABASE_URL / REDIS_URL, defaults 127.0.0.1) and a prior `pnpm build`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const dbName = `mcpt_demo_${suffix}`;
const databaseUrl = Object.assign(new URL(baseUrl), { pathname: `/${dbName}` }).toString();
const ports = { a: 18181, b: 18182 };
const tokens = { alice: 'demo-token-alice', mallory: 'demo-token-mallory' };
const leaseMs = 3000;

const shared = {
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  REDIS_PREFIX: `mcpt-demo-${suffix}`,
  LOG_LEVEL: 'warn',
};
const gatewayEnv = {
  ...shared,
  HOST: '127.0.0.1',
  MCP_AUTH: 'tokens',
  MCP_TOKENS: `${tokens.alice}:acme:alice,${tokens.mallory}:globex:mallory`,
  REQUEST_STATE_SECRET: randomBytes(32).toString('hex'),
};
const workerEnv = {
  ...shared,
  LEASE_MS: String(leaseMs),
  SWEEP_INTERVAL_MS: '500',
  REPORT_STEP_MS: '700',
  METRICS_PORT: '0',
};

const children = new Map<string, ChildProcess>();

function start(name: string, entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [entry], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.set(name, child);
  return child;
}

async function waitForHealth(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`gateway on port ${port} never became ready`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

let nextId = 1;

interface RpcReply {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** One MCP 2026-07-28 request with the routing headers a conforming client sends (R23). */
async function mcp(
  port: number,
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<RpcReply> {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {
            elicitation: { form: {} },
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
          'io.modelcontextprotocol/clientInfo': { name: 'mcp-tasks-demo', version: '1.0.0' },
        },
      },
    }),
  });
  return (await response.json()) as RpcReply;
}

function say(line: string): void {
  console.log(line);
}

function describe(reply: RpcReply): string {
  if (reply.error) return `error ${reply.error.code} "${reply.error.message}"`;
  const r = (reply.result ?? {}) as {
    resultType?: string;
    status?: string;
    statusMessage?: string;
    inputRequests?: Record<string, unknown>;
  };
  const parts = [`resultType=${r.resultType}`];
  if (r.status) parts.push(`status=${r.status}`);
  if (r.statusMessage) parts.push(`"${r.statusMessage}"`);
  if (r.inputRequests) parts.push(`inputRequests=${Object.keys(r.inputRequests).join(',')}`);
  if (r.resultType === 'complete' && !r.status) parts.push('(ack)');
  return parts.join(' ');
}

async function pollUntil(
  port: number,
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  let last = '';
  for (let i = 0; i < 300; i++) {
    const reply = await mcp(port, tokens.alice, 'tasks/get', { taskId });
    const line = describe(reply);
    if (line !== last) say(`  [${port === ports.a ? 'A' : 'B'}] tasks/get -> ${line}`);
    last = line;
    if (reply.result && done(reply.result)) return reply.result;
    await sleep(200);
  }
  throw new Error(`task ${taskId} did not reach the expected state`);
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  await admin.end();
  const db = new pg.Client({ connectionString: databaseUrl });

  try {
    say(`demo database ${dbName}, Redis prefix ${shared.REDIS_PREFIX}`);
    start('gateway-a', 'apps/gateway/dist/main.js', {
      ...gatewayEnv,
      PORT: String(ports.a),
      MCP_MIGRATE_ON_START: 'true',
    });
    await waitForHealth(ports.a);
    start('gateway-b', 'apps/gateway/dist/main.js', { ...gatewayEnv, PORT: String(ports.b) });
    start('worker-1', 'apps/worker/dist/main.js', { ...workerEnv, WORKER_ID: 'worker-1' });
    start('worker-2', 'apps/worker/dist/main.js', { ...workerEnv, WORKER_ID: 'worker-2' });
    await waitForHealth(ports.b);
    await db.connect();
    say('started gateway A :18181, gateway B :18182, worker-1, worker-2\n');

    const created = await mcp(ports.a, tokens.alice, 'tools/call', {
      name: 'generate_report',
      arguments: { size: 'large' },
    });
    say(`[A] tools/call generate_report {size: large} -> ${describe(created)}`);
    const taskId = String(created.result?.taskId);
    say(`    taskId ${taskId}`);

    const immediate = await mcp(ports.b, tokens.alice, 'tasks/get', { taskId });
    say(`[B] tasks/get at once on the other replica -> ${describe(immediate)}`);

    const foreign = await mcp(ports.b, tokens.mallory, 'tasks/get', { taskId });
    const missing = await mcp(ports.b, tokens.mallory, 'tasks/get', {
      taskId: 'tsk_AAAAAAAAAAAAAAAAAAAAAAAA',
    });
    say(`[B] tasks/get as another tenant -> ${describe(foreign)}`);
    say(`[B] tasks/get of an unknown id   -> ${describe(missing)}  (identical: nothing leaks)\n`);

    say('waiting for the outline:');
    await pollUntil(ports.b, taskId, (t) => t.status === 'input_required');

    const first = await mcp(ports.a, tokens.alice, 'tasks/update', {
      taskId,
      inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
    });
    say(`[A] tasks/update approve_outline only -> ${describe(first)}`);
    const partial = await mcp(ports.b, tokens.alice, 'tasks/get', { taskId });
    say(`[B] tasks/get -> ${describe(partial)}  (still waiting for the other key)`);
    const second = await mcp(ports.b, tokens.alice, 'tasks/update', {
      taskId,
      inputResponses: { choose_format: { action: 'accept', content: { format: 'html' } } },
    });
    say(`[B] tasks/update choose_format -> ${describe(second)}\n`);

    say('rendering:');
    await pollUntil(ports.a, taskId, (t) => /section 3 of/.test(String(t.statusMessage)));
    const { rows } = await db.query<{ lease_owner: string | null }>(
      'SELECT lease_owner FROM tasks WHERE id = $1',
      [taskId],
    );
    const holder = rows[0]?.lease_owner ?? 'worker-1';
    const victim = [...children.entries()].find(([name]) => holder.startsWith(name));
    if (victim) {
      victim[1].kill('SIGKILL');
      say(
        `  kill -9 ${victim[0]}, which holds the lease; the other worker takes over after ${leaseMs} ms`,
      );
    }
    const finished = await pollUntil(ports.a, taskId, (t) =>
      ['completed', 'failed', 'cancelled'].includes(String(t.status)),
    );
    const result = finished.result as
      { content?: Array<{ text?: string }>; structuredContent?: unknown } | undefined;
    say(`\n[A] final status ${String(finished.status)}`);
    const text = result?.content?.[0]?.text ?? '(none)';
    say(`    text: ${text.length > 100 ? `${text.slice(0, 100)}…` : text}`);
    say(`    structuredContent: ${JSON.stringify(result?.structuredContent)}`);
    const after = await db.query<{ lease_epoch: number; lease_owner: string | null }>(
      'SELECT lease_epoch, lease_owner FROM tasks WHERE id = $1',
      [taskId],
    );
    say(
      `    lease epochs used: ${after.rows[0]?.lease_epoch} (one per claim; stale holders fenced off)`,
    );
    if (finished.status !== 'completed') process.exitCode = 1;
  } finally {
    for (const child of children.values()) child.kill('SIGTERM');
    const running = [...children.values()].filter(
      (c) => c.exitCode === null && c.signalCode === null,
    );
    await Promise.all(running.map((c) => once(c, 'exit')));
    await db.end().catch(() => undefined);
    const cleanup = new pg.Client({ connectionString: baseUrl });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await cleanup.end();
  }
}

await main();
