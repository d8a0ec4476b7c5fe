import { join } from 'node:path';
import { ManagedProcess, type LogSink } from './managed-process.js';
import {
  freePort,
  launchProcess,
  nodeArguments,
  repoRoot,
  type LaunchedProcess,
} from './processes.js';

/**
 * The one launcher of a gateway-plus-worker topology: real gateway and worker processes, each on
 * a free port, started from source (tsx) or from their builds, polled until `/healthz` answers.
 * `launchGateway` and `launchWorker` start one process; `launchTopology` starts G gateways and W
 * workers on shared settings and keeps them for adding, restarting, killing and stopping.
 * Output is collected as `launchProcess` does (`process.output()`, `process.stderr()`).
 * `managedGateway` and `managedWorker` make the same processes as `ManagedProcess`es for a
 * long-lived stack: a fixed port kept across restarts, the exact environment given, every line
 * to a sink.
 */

export type AppName = 'gateway' | 'worker';
/** `source`: `apps/<app>/src/main.ts` through tsx; `dist`: the build on plain node. */
export type AppBuild = 'source' | 'dist';

/** The entry of an app, relative to the repository root (or under another tree's `appsRoot`). */
export function appEntry(app: AppName, build: AppBuild = 'source', appsRoot?: string): string {
  const file =
    build === 'source' ? join('apps', app, 'src', 'main.ts') : join('apps', app, 'dist', 'main.js');
  return appsRoot === undefined ? file : join(appsRoot, file);
}

export interface LaunchAppOptions {
  /** The process's environment (over the launcher's own: `process.env`, `LOG_LEVEL=warn`). */
  env: Record<string, string>;
  /** Default `source`. */
  build?: AppBuild;
  /** Another entry than `appEntry(app, build)`, e.g. another checkout's build. */
  entry?: string;
  /** Polled until it answers 200: default `/healthz`; a gateway's `/readyz` also checks its stores. */
  readyPath?: string;
  /** Default true; false resolves once the process is spawned. */
  waitReady?: boolean;
  /** How long readiness may take; default launchProcess's (20 s). */
  readyTimeoutMs?: number;
  /** Default `pipe` (output collected); `inherit` writes it to this process's. */
  stdio?: 'pipe' | 'inherit';
  /** Node flags before the entry (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
  /** A fixed port (e.g. a base port + i); default a free one. */
  port?: number;
}

export interface GatewayHandle {
  /** `http://127.0.0.1:PORT` (the MCP endpoint is `${url}/mcp`). */
  url: string;
  port: number;
  process: LaunchedProcess;
}

export interface WorkerHandle {
  /** Its WORKER_ID. */
  id: string;
  /** Its METRICS_PORT (`/healthz`, `/metrics`). */
  port: number;
  metricsUrl: string;
  process: LaunchedProcess;
}

/** One gateway on a free port: `env` plus PORT and HOST=127.0.0.1; resolves once healthy. */
export async function launchGateway(options: LaunchAppOptions): Promise<GatewayHandle> {
  const port = options.port ?? (await freePort());
  const { url, env } = gatewayOn(port);
  const process = await launchProcess({
    entry: options.entry ?? appEntry('gateway', options.build),
    env: { ...options.env, ...env },
    readyUrl: readyUrl(url, options),
    readyTimeoutMs: options.readyTimeoutMs,
    nodeArgs: options.nodeArgs,
    stdio: options.stdio,
  });
  return { url, port, process };
}

export interface LaunchWorkerOptions extends LaunchAppOptions {
  /** WORKER_ID, or made from the metrics port it was given. */
  id: string | ((metricsPort: number) => string);
  /** Environment after METRICS_PORT and WORKER_ID (a test may replace either). */
  overrides?: Record<string, string>;
}

/** One worker: `env`, METRICS_PORT on a free port, WORKER_ID, `overrides`; resolves once healthy. */
export async function launchWorker(options: LaunchWorkerOptions): Promise<WorkerHandle> {
  const port = options.port ?? (await freePort());
  const id = typeof options.id === 'string' ? options.id : options.id(port);
  const { metricsUrl, env } = workerOn(port, id);
  const process = await launchProcess({
    entry: options.entry ?? appEntry('worker', options.build),
    env: { ...options.env, ...env, ...options.overrides },
    readyUrl: readyUrl(metricsUrl, options),
    readyTimeoutMs: options.readyTimeoutMs,
    nodeArgs: options.nodeArgs,
    stdio: options.stdio,
  });
  return { id, port, metricsUrl, process };
}

export interface ManagedAppOptions {
  /** Its name in log lines and error messages, e.g. `gateway-1`. */
  name: string;
  /**
   * The process's complete environment, exactly as given: nothing inherited, no `LOG_LEVEL`
   * default (an undefined value is left out). The port's variables go over it.
   */
  env: Record<string, string | undefined>;
  /** A fixed port (e.g. a base port + i); default a free one. Either way kept across restarts. */
  port?: number;
  /** Receives every line the process writes, as `{ name, role, stream, text }`; default dropped. */
  sink?: LogSink;
  /** Default `source`. */
  build?: AppBuild;
  /** Another entry than `appEntry(app, build)`. */
  entry?: string;
  /** Polled until it answers 200 after each start: default `/healthz`. */
  readyPath?: string;
  /** Node flags before the entry. */
  nodeArgs?: readonly string[];
}

/**
 * One gateway as a `ManagedProcess`, not started: `env` plus PORT and HOST=127.0.0.1. `start()`
 * spawns it and waits until it is ready (60 s); `restart()` stops it (SIGTERM, SIGKILL after
 * 25 s) and starts it again on the same port; `recentOutput()` holds its last 40 lines.
 */
export async function managedGateway(options: ManagedAppOptions): Promise<ManagedProcess> {
  const port = options.port ?? (await freePort());
  const { url, env } = gatewayOn(port);
  return new ManagedProcess(
    {
      ...managedSpec('gateway', options),
      env: { ...options.env, ...env },
      readyUrl: `${url}${options.readyPath ?? '/healthz'}`,
      url,
    },
    options.sink ?? (() => undefined),
  );
}

export interface ManagedWorkerOptions extends Omit<ManagedAppOptions, 'name'> {
  /** Its WORKER_ID, also its name. */
  id: string;
}

/**
 * One worker as a `ManagedProcess`, not started: `env` plus METRICS_PORT (`/healthz`, `/metrics`)
 * and WORKER_ID; started, restarted and stopped as `managedGateway`'s.
 */
export async function managedWorker(options: ManagedWorkerOptions): Promise<ManagedProcess> {
  const port = options.port ?? (await freePort());
  const { metricsUrl, env } = workerOn(port, options.id);
  return new ManagedProcess(
    {
      ...managedSpec('worker', { ...options, name: options.id }),
      env: { ...options.env, ...env },
      readyUrl: `${metricsUrl}${options.readyPath ?? '/healthz'}`,
      workerId: options.id,
    },
    options.sink ?? (() => undefined),
  );
}

/** A gateway on `port`: its URL and the variables that put it there. */
const gatewayOn = (port: number) => ({
  url: `http://127.0.0.1:${port}`,
  env: { PORT: String(port), HOST: '127.0.0.1' },
});

/** A worker with its metrics on `port`: their URL and the variables that put it there. */
const workerOn = (port: number, id: string) => ({
  metricsUrl: `http://127.0.0.1:${port}`,
  env: { METRICS_PORT: String(port), WORKER_ID: id },
});

/** What a managed app's spec shares: plain node on its entry from the repository root. */
const managedSpec = (app: AppName, options: ManagedAppOptions) => ({
  name: options.name,
  role: app,
  command: process.execPath,
  args: nodeArguments(options.entry ?? appEntry(app, options.build), options.nodeArgs, options.env),
  cwd: repoRoot,
  stopSignal: 'SIGTERM' as const,
});

export interface TopologyOptions {
  /** How many of each to start now; default 1 and 1 (more with addGateway / addWorker). */
  gateways?: number;
  workers?: number;
  /** Every process's environment (DATABASE_URL, REDIS_URL, REDIS_PREFIX, ...). */
  env?: Record<string, string>;
  /** The gateways' own, after `env`. */
  gatewayEnv?: Record<string, string>;
  /** The workers' own, after `env`. */
  workerEnv?: Record<string, string>;
  /** WORKER_ID of the `index`-th worker started (0-based); default `worker-${index + 1}`. */
  workerId?: (index: number, metricsPort: number) => string;
  build?: AppBuild;
  gatewayEntry?: string;
  workerEntry?: string;
  readyTimeoutMs?: number;
  nodeArgs?: readonly string[];
  /**
   * `parallel` (default): the gateways at once, then the workers at once. `sequential`: one
   * process after another, each healthy before the next starts.
   */
  order?: 'parallel' | 'sequential';
}

export interface Topology {
  /** Live lists: addGateway, addWorker and restartWorker change them. */
  gateways: GatewayHandle[];
  workers: WorkerHandle[];
  /** One more gateway with `env` after the topology's; resolves once healthy. */
  addGateway(env?: Record<string, string>): Promise<GatewayHandle>;
  /** One more worker; `env` goes after METRICS_PORT and WORKER_ID; resolves once healthy. */
  addWorker(env?: Record<string, string>): Promise<WorkerHandle>;
  /**
   * Stops a worker (SIGTERM, SIGKILL after `graceMs`; at once if it is dead already) and starts
   * it again with the same WORKER_ID and environment on a new metrics port, in its place.
   */
  restartWorker(worker: WorkerHandle, graceMs?: number): Promise<WorkerHandle>;
  /** The pids of every process started (restarted ones included), running or not. */
  pids(): number[];
  /** Every process still running gets `signal`. */
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM every process (SIGKILL after `graceMs`) and wait for them all. */
  stop(graceMs?: number): Promise<void>;
}

export async function launchTopology(options: TopologyOptions = {}): Promise<Topology> {
  const started: LaunchedProcess[] = [];
  const start = topologyStarters(options, started);
  const topology = topologyHandle(start, started);
  try {
    await startFirst(options, topology, start);
  } catch (error) {
    await topology.stop();
    throw error;
  }
  return topology;
}

/** How a topology starts its processes, on its shared settings; each one goes into `started`. */
function topologyStarters(options: TopologyOptions, started: LaunchedProcess[]) {
  const workerOverrides = new Map<WorkerHandle, Record<string, string>>();
  let workersStarted = 0;
  const common = {
    build: options.build,
    readyTimeoutMs: options.readyTimeoutMs,
    nodeArgs: options.nodeArgs,
  };
  return {
    async gateway(env: Record<string, string> = {}) {
      const gateway = await launchGateway({
        ...common,
        entry: options.gatewayEntry,
        env: { ...options.env, ...options.gatewayEnv, ...env },
      });
      started.push(gateway.process);
      return gateway;
    },
    async worker(id: WorkerLaunchId, overrides: Record<string, string> = {}) {
      const worker = await launchWorker({
        ...common,
        entry: options.workerEntry,
        env: { ...options.env, ...options.workerEnv },
        id,
        overrides,
      });
      started.push(worker.process);
      workerOverrides.set(worker, overrides);
      return worker;
    },
    /** The environment a started worker was given after its identity. */
    overridesOf: (worker: WorkerHandle) => workerOverrides.get(worker),
    nextWorkerId: (): WorkerLaunchId => {
      const index = workersStarted++;
      return (port) => options.workerId?.(index, port) ?? `worker-${index + 1}`;
    },
  };
}
type TopologyStarters = ReturnType<typeof topologyStarters>;

/** The `Topology` over the processes `start` launches (none yet). */
function topologyHandle(start: TopologyStarters, started: LaunchedProcess[]): Topology {
  const gateways: GatewayHandle[] = [];
  const workers: WorkerHandle[] = [];
  return {
    gateways,
    workers,
    async addGateway(env) {
      const gateway = await start.gateway(env);
      gateways.push(gateway);
      return gateway;
    },
    async addWorker(env) {
      const worker = await start.worker(start.nextWorkerId(), env);
      workers.push(worker);
      return worker;
    },
    async restartWorker(worker, graceMs) {
      await worker.process.stop(graceMs);
      const again = await start.worker(worker.id, start.overridesOf(worker));
      const at = workers.indexOf(worker);
      if (at >= 0) workers[at] = again;
      else workers.push(again);
      return again;
    },
    pids: () => started.flatMap((p) => (p.child.pid === undefined ? [] : [p.child.pid])),
    kill(signal) {
      for (const p of started) {
        if (p.child.exitCode === null && p.child.signalCode === null) p.kill(signal);
      }
    },
    async stop(graceMs) {
      await Promise.allSettled(started.map((p) => p.stop(graceMs)));
    },
  };
}

/** The topology's first gateways and workers, in the order `options.order` asks for. */
async function startFirst(
  options: TopologyOptions,
  topology: Topology,
  start: TopologyStarters,
): Promise<void> {
  const gatewayCount = options.gateways ?? 1;
  const workerCount = options.workers ?? 1;
  if (options.order === 'sequential') {
    for (let i = 0; i < gatewayCount; i += 1) await topology.addGateway();
    for (let i = 0; i < workerCount; i += 1) await topology.addWorker();
  } else {
    // Ids in start order, pushed in start order, whichever is healthy first.
    topology.gateways.push(
      ...(await Promise.all(Array.from({ length: gatewayCount }, () => start.gateway()))),
    );
    const ids = Array.from({ length: workerCount }, start.nextWorkerId);
    topology.workers.push(...(await Promise.all(ids.map((id) => start.worker(id)))));
  }
}

type WorkerLaunchId = LaunchWorkerOptions['id'];

const readyUrl = (base: string, options: LaunchAppOptions): string | undefined =>
  options.waitReady === false ? undefined : `${base}${options.readyPath ?? '/healthz'}`;
