import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  managedGateway,
  managedWorker,
  ManagedProcess,
  type LogSink,
} from '@mcp-tasks/testing';
import {
  DEMO_CONSOLE_TOKENS,
  DEMO_MCP_TOKENS,
  DEMO_REQUEST_STATE_SECRET,
  tokensByPrincipal,
} from './demo-credentials.js';
import { buildStalePackages } from './incremental-build.js';
import { readNginxTemplate, renderNginxConfig } from './nginx-config.js';
import { StackStartError, ensurePostgres, ensureRedis } from './preflight.js';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/mcp_tasks';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_REDIS_PREFIX = 'mcp-tasks';

export interface StackOptions {
  /** Gateway replicas (default 3). */
  gateways?: number;
  /** Worker processes (default 2). */
  workers?: number;
  databaseUrl?: string;
  redisUrl?: string;
  /**
   * REDIS_CLUSTER_NODES (host:port,...) for the apps instead of redisUrl: the stack on a Redis
   * Cluster. The apps probe it themselves at start (a gateway exits with one line if it fails).
   */
  redisClusterNodes?: string;
  redisPrefix?: string;
  /** The proxy's port on 127.0.0.1 (default 8080; 0 = a free ephemeral port). */
  proxyPort?: number;
  /** gateway-N listens on base + N; unset = ephemeral ports. */
  gatewayBasePort?: number;
  /** worker-N serves /healthz and /metrics on base + N; unset = ephemeral ports. */
  workerMetricsBasePort?: number;
  /** Variables for every process, over the stack's defaults and the inherited environment. */
  env?: Record<string, string | undefined>;
  /**
   * Per worker (by WORKER_ID, `worker-N`): its own DATABASE_URL and/or REDIS_URL instead of the
   * stack's, e.g. through a fault-injecting proxy that cuts only that worker off (the load test's
   * `partition` chaos). Unset (as `pnpm stack` leaves it): every worker uses the stack's URLs.
   */
  workerConnections?: (workerId: string) => { databaseUrl?: string; redisUrl?: string };
  /** Receives every line every process writes (default: dropped). */
  logSink?: LogSink;
  /** Build stale packages first (default true). */
  build?: boolean;
  /** nginx from infra/ (default when installed) or the Node fallback proxy. */
  proxy?: 'nginx' | 'node';
}

export interface StackHandle {
  /** The MCP endpoint through the proxy, e.g. http://127.0.0.1:8080/mcp. */
  url: string;
  databaseUrl: string;
  redisUrl: string;
  /** Set when the stack runs on a Redis Cluster (redisUrl is then unused). */
  redisClusterNodes?: string;
  redisPrefix: string;
  /** principal → bearer token, from the effective MCP_TOKENS. */
  tokens: Record<string, string>;
  gateways: ManagedProcess[];
  workers: ManagedProcess[];
  proxy: ManagedProcess;
  proxyKind: 'nginx' | 'node';
  /** Every managed process: gateways, then workers, then the proxy. */
  processes: ManagedProcess[];
  /** Graceful: the proxy, then every app with SIGTERM; SIGKILL for any still alive after graceMs. */
  stop(graceMs?: number): Promise<void>;
}

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** base + index, or a free port when there is no base. */
function portFor(base: number | undefined, index: number): number | undefined {
  return base === undefined ? undefined : base + index;
}

function findNginx(): string | undefined {
  return ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((c) => existsSync(c));
}

/** The fallback proxy's entry: the .ts source under tsx, or the built .js. */
function nodeProxyCommand(): string[] {
  const self = fileURLToPath(import.meta.url);
  return self.endsWith('.ts')
    ? ['--import', 'tsx', join(dirname(self), 'node-proxy.ts')]
    : [join(dirname(self), 'node-proxy.js')];
}

async function runMigrations(databaseUrl: string, env: Record<string, string | undefined>) {
  const child = spawn(process.execPath, ['packages/store/dist/cli/migrate.js'], {
    cwd: repoRoot,
    env: { ...env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new StackStartError(`migrations failed: ${output.trim()}`);
  return output.trim();
}

/** Postgres and Redis answer (the database created if missing); stale packages built. */
async function prepare(
  options: StackOptions,
  databaseUrl: string,
  redisUrl: string,
  say: (text: string) => void,
): Promise<void> {
  const clusterNodes = options.redisClusterNodes;
  if (clusterNodes === undefined) await ensureRedis(redisUrl);
  if ((await ensurePostgres(databaseUrl)).created)
    say(`created database ${new URL(databaseUrl).pathname.slice(1)}`);
  say('Postgres and Redis answer');
  if (options.build ?? true) {
    const built = await buildStalePackages(repoRoot, say);
    say(built.length === 0 ? 'every package is up to date' : `built ${built.length} package(s)`);
  }
}

function stackEnv(
  options: StackOptions,
  databaseUrl: string,
  redisUrl: string,
  redisPrefix: string,
): Record<string, string | undefined> {
  const clusterNodes = options.redisClusterNodes;
  // Stack defaults < inherited environment < the explicit options < per-process identity.
  return {
    MCP_AUTH: 'tokens',
    MCP_TOKENS: DEMO_MCP_TOKENS,
    REQUEST_STATE_SECRET: DEMO_REQUEST_STATE_SECRET,
    MCP_CONSOLE_TOKENS: DEMO_CONSOLE_TOKENS,
    ...process.env,
    DATABASE_URL: databaseUrl,
    // One of the two, the other empty (the apps read an empty variable as unset).
    REDIS_URL: clusterNodes === undefined ? redisUrl : '',
    REDIS_CLUSTER_NODES: clusterNodes ?? '',
    REDIS_PREFIX: redisPrefix,
    ...options.env,
  };
}

/** The gateway replicas, not started: gateway-1… on the base port + i, or free ports. */
async function createGateways(
  options: StackOptions,
  env: Record<string, string | undefined>,
  sink: LogSink,
): Promise<ManagedProcess[]> {
  const gateways: ManagedProcess[] = [];
  for (let i = 1; i <= (options.gateways ?? 3); i++) {
    gateways.push(
      await managedGateway({
        name: `gateway-${i}`,
        build: 'dist',
        port: portFor(options.gatewayBasePort, i),
        env,
        readyPath: '/readyz',
        sink,
      }),
    );
  }
  return gateways;
}

/** The workers, not started: worker-1… with their metrics on the base port + i, or free ports. */
async function createWorkers(
  options: StackOptions,
  env: Record<string, string | undefined>,
  sink: LogSink,
): Promise<ManagedProcess[]> {
  const workers: ManagedProcess[] = [];
  for (let i = 1; i <= (options.workers ?? 2); i++) {
    const workerId = `worker-${i}`;
    const own = options.workerConnections?.(workerId) ?? {};
    workers.push(
      await managedWorker({
        id: workerId,
        build: 'dist',
        port: portFor(options.workerMetricsBasePort, i),
        env: {
          ...env,
          ...(own.databaseUrl === undefined ? {} : { DATABASE_URL: own.databaseUrl }),
          ...(own.redisUrl === undefined ? {} : { REDIS_URL: own.redisUrl }),
        },
        sink,
      }),
    );
  }

  return workers;
}

/** nginx (or the Node proxy) in front of the gateways, not started, with its scratch directory. */
async function createProxy(
  options: StackOptions,
  proxyKind: 'nginx' | 'node',
  nginx: string | undefined,
  gateways: ManagedProcess[],
  sink: LogSink,
  say: (text: string) => void,
) {
  const proxyPort = options.proxyPort === 0 ? await freePort() : (options.proxyPort ?? 8080);
  const proxyBase = `http://127.0.0.1:${proxyPort}`;
  const upstreams = gateways.map((g) => ({
    host: '127.0.0.1',
    port: Number(new URL(g.url ?? '').port),
  }));
  const nginxDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-nginx-'));
  let command: string;
  let args: string[];
  if (proxyKind === 'nginx' && nginx !== undefined) {
    const config = renderNginxConfig(await readNginxTemplate(repoRoot), {
      listenPort: proxyPort,
      gateways: upstreams,
      accessLog: join(nginxDir, 'access.log'),
    });
    await writeFile(join(nginxDir, 'nginx.conf'), config);
    command = nginx;
    args = [
      '-p',
      nginxDir,
      '-c',
      join(nginxDir, 'nginx.conf'),
      '-e',
      'stderr',
      '-g',
      'daemon off;',
    ];
  } else {
    say(
      `${nginx === undefined ? 'nginx is not installed' : 'proxy: node'}: using the Node proxy (tooling/stack/src/node-proxy.ts)`,
    );
    command = process.execPath;
    args = [
      ...nodeProxyCommand(),
      String(proxyPort),
      upstreams.map((u) => `${u.host}:${u.port}`).join(','),
    ];
  }
  const proxy = new ManagedProcess(
    {
      name: 'proxy',
      role: 'proxy',
      command,
      args,
      cwd: repoRoot,
      env: process.env,
      readyUrl: `${proxyBase}/healthz`,
      // nginx's graceful SIGQUIT would wait for open listen streams; SIGTERM closes them.
      stopSignal: 'SIGTERM',
      url: proxyBase,
    },
    sink,
  );
  return { proxy, proxyBase, nginxDir };
}

/**
 * The docker compose topology as local processes: migrations, gateway replicas, workers, and
 * nginx from infra/ in front of the gateways. Resolves once everything answers through the proxy.
 */
export async function startStack(options: StackOptions = {}): Promise<StackHandle> {
  const sink: LogSink = options.logSink ?? (() => undefined);
  const began = Date.now();
  const say = (text: string) =>
    sink({
      name: 'stack',
      role: 'stack',
      stream: 'stdout',
      text: `${text} (+${((Date.now() - began) / 1000).toFixed(1)} s)`,
    });
  const databaseUrl = options.databaseUrl ?? DEFAULT_DATABASE_URL;
  const redisUrl = options.redisUrl ?? DEFAULT_REDIS_URL;
  const redisPrefix = options.redisPrefix ?? DEFAULT_REDIS_PREFIX;
  const nginx = findNginx();
  const proxyKind = options.proxy ?? (nginx === undefined ? 'node' : 'nginx');
  if (proxyKind === 'nginx' && nginx === undefined) {
    throw new StackStartError(
      'nginx is not installed (Debian: apt-get install nginx); without it the stack uses its Node proxy.',
    );
  }

  const clusterNodes = options.redisClusterNodes;
  await prepare(options, databaseUrl, redisUrl, say);

  const env = stackEnv(options, databaseUrl, redisUrl, redisPrefix);
  say(await runMigrations(databaseUrl, env));

  const gateways = await createGateways(options, env, sink);
  const workers = await createWorkers(options, env, sink);

  const { proxy, proxyBase, nginxDir } = await createProxy(
    options,
    proxyKind,
    nginx,
    gateways,
    sink,
    say,
  );

  const processes = [...gateways, ...workers, proxy];
  const stop = async (graceMs = 25_000): Promise<void> => {
    await proxy.stop(graceMs);
    await Promise.all([...gateways, ...workers].map((p) => p.stop(graceMs)));
    await rm(nginxDir, { recursive: true, force: true });
  };
  try {
    await Promise.all([...gateways, ...workers].map((p) => p.start()));
    say(`${gateways.length} gateways ready, ${workers.length} workers ready`);
    await proxy.start();
  } catch (error) {
    await stop(5_000);
    throw error;
  }
  return {
    url: `${proxyBase}/mcp`,
    databaseUrl,
    redisUrl,
    ...(clusterNodes === undefined ? {} : { redisClusterNodes: clusterNodes }),
    redisPrefix,
    tokens: tokensByPrincipal(env.MCP_TOKENS ?? ''),
    gateways,
    workers,
    proxy,
    proxyKind,
    processes,
    stop,
  };
}
