// The launcher itself: real gateway and worker processes (from source) on a real Postgres
// database and Redis prefix; a task called over HTTP runs to the end before and after the worker
// is killed and restarted; a managed worker on the exact environment restarted on its port.
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LogLine } from './managed-process.js';
import { freePort } from './processes.js';
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
} from './services.js';
import { FAST_WORKER_ENV } from './tool-stack.js';
import { nodeArguments } from './processes.js';
import { appEntry, launchTopology, managedWorker, type Topology } from './topology.js';

const PROTOCOL_VERSION = '2026-07-28';

let database: TestDatabase;
let redis: TestRedis;
let topology: Topology;

beforeAll(async () => {
  database = await createTestDatabase('topology');
  redis = await createTestRedis('topology');
  topology = await launchTopology({
    gateways: 1,
    workers: 1,
    env: {
      DATABASE_URL: database.connectionString,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      MCP_TOOL_PACKS: 'reports,conformance',
    },
    gatewayEnv: { MCP_AUTH: 'none', MCP_MIGRATE_ON_START: 'true' },
    workerEnv: FAST_WORKER_ENV,
    workerId: (index) => `topology-w${index + 1}`,
    readyTimeoutMs: 60_000,
    // The gateway migrates; the worker starts once it is healthy.
    order: 'sequential',
  });
}, 120_000);

afterAll(async () => {
  await topology?.stop(5_000);
  await redis?.deleteKeys();
  await database?.drop();
});

let nextId = 1;
async function rpc(method: string, params: Record<string, unknown>) {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const response = await fetch(`${topology.gateways[0]!.url}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
      'Mcp-Method': method,
      'Mcp-Name': String(name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
          'io.modelcontextprotocol/clientCapabilities': {
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
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
  const body = JSON.parse(payload ?? 'null') as {
    result?: Record<string, unknown>;
    error?: unknown;
  };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** slow_compute called as a task through the gateway, polled until it ends. */
async function runReport(label: string): Promise<Record<string, unknown>> {
  const created = await rpc('tools/call', {
    name: 'slow_compute',
    arguments: { seconds: 1, label },
  });
  const taskId = created.taskId as string;
  expect(typeof taskId).toBe('string');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const task = await rpc('tasks/get', { taskId });
    if (['completed', 'failed', 'cancelled'].includes(task.status as string)) return task;
    if (Date.now() > deadline) {
      const logs = [topology.gateways[0]!, ...topology.workers]
        .map((handle) => handle.process.output().slice(-2000))
        .join('\n---\n');
      throw new Error(`task ${taskId} still ${String(task.status)}\n${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('launchTopology', () => {
  it('starts a gateway and a worker that run a task called over HTTP', async () => {
    expect(topology.gateways).toHaveLength(1);
    expect(topology.workers).toHaveLength(1);
    expect(topology.workers[0]!.id).toBe('topology-w1');
    expect((await fetch(`${topology.workers[0]!.metricsUrl}/healthz`)).ok).toBe(true);
    expect((await runReport('before')).status).toBe('completed');
  });

  it('a killed worker restarts with its id and the next task completes', async () => {
    const worker = topology.workers[0]!;
    worker.process.kill('SIGKILL');
    expect(await worker.process.exited).toBe('SIGKILL');

    const again = await topology.restartWorker(worker);
    expect(again.id).toBe('topology-w1');
    expect(again.process.child.pid).not.toBe(worker.process.child.pid);
    expect(topology.workers).toEqual([again]);
    expect(topology.pids()).toHaveLength(3);
    expect((await runReport('after')).status).toBe('completed');
  });

  it('stop ends every process', async () => {
    await topology.stop(5_000);
    const exits = [topology.gateways[0]!, ...topology.workers].map(
      (handle) => handle.process.child.exitCode ?? handle.process.child.signalCode,
    );
    expect(exits.every((exit) => exit !== null)).toBe(true);
  });
});

describe('managedWorker', () => {
  it('runs on exactly its environment, streams its lines, restarts on its fixed port', async () => {
    const port = await freePort();
    const lines: LogLine[] = [];
    const env = {
      DATABASE_URL: database.connectionString,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      MCP_TOOL_PACKS: 'reports,conformance',
      ...FAST_WORKER_ENV,
      LEFT_OUT: undefined,
    };
    const worker = await managedWorker({ id: 'managed-w1', port, env, sink: (l) => lines.push(l) });
    expect([worker.name, worker.role, worker.workerId, worker.url]).toEqual([
      'managed-w1',
      'worker',
      'managed-w1',
      undefined,
    ]);
    expect(worker.readyUrl).toBe(`http://127.0.0.1:${port}/healthz`);
    try {
      await worker.start(60_000);
      const first = worker.pid!;
      // Nothing inherited, no LOG_LEVEL: the worker's own default level (info) reaches the sink.
      const environ = await readFile(`/proc/${first}/environ`, 'utf8');
      expect(environ.split('\0').filter(Boolean).sort()).toEqual(
        Object.entries({ ...env, METRICS_PORT: String(port), WORKER_ID: 'managed-w1' })
          .filter(([, value]) => value !== undefined)
          .map(([key, value]) => `${key}=${value}`)
          .sort(),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({ name: 'managed-w1', role: 'worker', stream: 'stdout' }),
      );
      expect(worker.recentOutput()).toContain('worker ready');

      await worker.restart(5_000);
      expect(worker.pid).not.toBe(first);
      expect(worker.running).toBe(true);
      expect((await fetch(worker.readyUrl)).ok).toBe(true);
    } finally {
      await worker.stop(5_000);
    }
    expect(worker.running).toBe(false);
  }, 120_000);
});

describe('appEntry', () => {
  it('names the source or the build of an app, here or under another tree', () => {
    expect(appEntry('gateway')).toBe('apps/gateway/src/main.ts');
    expect(appEntry('worker', 'dist')).toBe('apps/worker/dist/main.js');
    expect(appEntry('worker', 'dist', '/tmp/old')).toBe('/tmp/old/apps/worker/dist/main.js');
  });
});

describe('nodeArguments', () => {
  afterEach(() => vi.unstubAllEnvs());
  const runWith = (
    build: string | undefined,
    entry: string,
    env?: Record<string, string>,
    nodeArgs = ['--cpu-prof'],
  ) => {
    vi.stubEnv('MCP_TASKS_TEST_BUILD', build);
    return nodeArguments(entry, nodeArgs, env);
  };

  it('runs a source entry through tsx unless MCP_TASKS_TEST_BUILD=dist', () => {
    const fromSource = ['--cpu-prof', '--conditions=@mcp-tasks/source', '--import', 'tsx'];
    expect(runWith(undefined, 'apps/worker/src/main.ts')).toEqual([
      ...fromSource,
      'apps/worker/src/main.ts',
    ]);
    expect(runWith('source', 'packages/client/src/cli/main.ts')).toEqual([
      ...fromSource,
      'packages/client/src/cli/main.ts',
    ]);
  });

  it('runs the build of a workspace source entry on plain node with MCP_TASKS_TEST_BUILD=dist', () => {
    const tsx = ['--conditions=@mcp-tasks/source', '--import', 'tsx'];
    // A built entry, or a TypeScript file outside a package's src (a test fixture), is left alone.
    const runs: [entry: string, run: string[]][] = [
      ['apps/worker/src/main.ts', ['apps/worker/dist/main.js']],
      ['packages/client/src/cli/main.ts', ['packages/client/dist/cli/main.js']],
      ['apps/gateway/dist/main.js', ['apps/gateway/dist/main.js']],
      [
        'apps/worker/test/fixtures/tally-tool.ts',
        [...tsx, 'apps/worker/test/fixtures/tally-tool.ts'],
      ],
    ];
    for (const [entry, run] of runs)
      expect(runWith('dist', entry), entry).toEqual(['--cpu-prof', ...run]);
  });

  it('keeps tsx, without the source condition, for a built app that loads TypeScript tool modules', () => {
    expect(
      runWith(
        'dist',
        'apps/worker/src/main.ts',
        {
          MCP_TOOL_MODULES: '@acme/tools, ./apps/worker/test/fixtures/tally-tool.ts',
        },
        [],
      ),
    ).toEqual(['--import', 'tsx', 'apps/worker/dist/main.js']);
    expect(
      runWith('dist', 'apps/worker/src/main.ts', { MCP_TOOL_MODULES: './tools/index.js' }, []),
    ).toEqual(['apps/worker/dist/main.js']);
  });

  it('refuses a dist run whose build is missing, naming the command that makes it', () => {
    expect(() => runWith('dist', 'packages/tools/src/no-such-entry.ts')).toThrow(
      'MCP_TASKS_TEST_BUILD=dist, but packages/tools/dist/no-such-entry.js does not exist: run pnpm build first',
    );
  });
});
