import { appEntry, launchTopology, type LaunchedProcess } from '@mcp-tasks/testing';
import { BENCH_TOKENS } from './mcp-requests.js';

export interface BenchStack {
  gateways: { url: string; process: LaunchedProcess }[];
  workers: LaunchedProcess[];
  stop(): Promise<void>;
}

/**
 * G gateways and W workers as real processes on the bench's database and Redis prefix, run from
 * their builds on plain node as the production image runs them (tsx's loader and source maps
 * are not what users run; the bench builds what is stale first). Logs at warn: at full speed,
 * info lines would cost the figures something.
 */
export async function startBenchStack(options: {
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  gateways: number;
  workers: number;
  workerConcurrency: number;
  /** Each process writes a V8 CPU profile here when it exits (`node --cpu-prof`). */
  cpuProfileDir?: string;
  /** More node flags for every process, e.g. `--trace-gc-nvp` (a probe's diagnostics). */
  nodeArgs?: readonly string[];
  /** More environment for every process (e.g. MCP_TOOL_MODULES). */
  env?: Record<string, string>;
  /** Another build of the worker (e.g. an older checkout's), to measure it side by side. */
  workerEntry?: string;
  /**
   * Another tree's built gateway and worker (e.g. an older commit's, installed and built there),
   * to measure them side by side with this one's; default this repository's.
   */
  appsRoot?: string;
}): Promise<BenchStack> {
  const topology = await launchTopology({
    gateways: options.gateways,
    workers: options.workers,
    build: 'dist',
    gatewayEntry: appEntry('gateway', 'dist', options.appsRoot),
    workerEntry: options.workerEntry ?? appEntry('worker', 'dist', options.appsRoot),
    env: {
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      REDIS_PREFIX: options.redisPrefix,
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    gatewayEnv: {
      MCP_AUTH: 'tokens',
      MCP_TOKENS: BENCH_TOKENS,
      REQUEST_STATE_SECRET: 'bench-request-state-secret-0123456789abcdef',
      // Nothing routes to it: stop at once, well within the launcher's kill grace (a killed
      // process writes no CPU profile).
      MCP_SHUTDOWN_DELAY_MS: '0',
      // The per-tenant limits run, far out of the way: the bench's one tenant measures their
      // cost (a recount a second, a token lease), never their refusals.
      TENANT_MAX_IN_FLIGHT: '100000000',
      TENANT_CREATE_RATE: '1000000',
      TENANT_CREATE_BURST: '1000000',
    },
    workerEnv: { WORKER_CONCURRENCY: String(options.workerConcurrency) },
    workerId: (index) => `bench-worker-${index + 1}`,
    readyTimeoutMs: 60_000,
    nodeArgs: [
      ...(options.nodeArgs ?? []),
      ...(options.cpuProfileDir === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`]),
    ],
  });
  return {
    gateways: topology.gateways.map(({ url, process }) => ({ url, process })),
    workers: topology.workers.map((worker) => worker.process),
    stop: () => topology.stop(),
  };
}

/** What a same-stack cost figure (effects, traces) needs: the bench's database, Redis and stacks. */
export interface StackCostOptions {
  databaseUrl: string;
  statsUrl: string;
  databaseName: string;
  redisUrl: string;
  concurrency: number;
  durationS: number;
  warmupS: number;
  stackOptions: Omit<Parameters<typeof startBenchStack>[0], 'gateways' | 'workers'>;
  stacks: BenchStack[];
}
