import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEMO_MCP_TOKENS,
  DEMO_REQUEST_STATE_SECRET,
  startStack,
  type StackHandle,
} from '@mcp-tasks/stack';
import {
  createTestDatabase,
  createTestRedis,
  startFailoverCluster,
  startRedisCluster,
  startTcpProxy,
  type FailoverCluster,
  type PgBouncer,
  type ReplicaSet,
  type RedisCluster,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import {
  ChaosRoundError,
  runChaos,
  type ChaosPlan,
  type ChaosRounds,
  type RestartableServer,
  type WorkerLinks,
} from '../chaos/plan.js';
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivateServer,
} from '../chaos/private-servers.js';
import type { RedisTopology } from '../chaos/registry.js';
import { checkHistory, type CheckResult } from '../check/checker.js';
import { readHistory } from '../history/read-history.js';
import { createHistoryRecorder, type HistoryRecorder } from '../history/recorder.js';
import { parseStepLogLine } from '../history/step-log-collector.js';
import { createRunProgress } from '../report/progress.js';
import type { HistoryRecord } from '../history/records.js';
import type { Endpoint, Tenant } from './endpoints.js';
import {
  REPLICA_STALE_READ_MS,
  restartable,
  startPoolerTopology,
  startReplicaTopology,
  type DatabaseTopology,
} from './database-topology.js';
import { readFinals, runLifecycle, type LoadContext } from './lifecycle.js';
import { LEDGER_MODULE, openLedger, recordLedger } from './ledger.js';
import { generateMix, type TenantRole } from './mix.js';
import { createRng } from './prng.js';
import { createStepTracker } from './step-tracker.js';

export interface LoadOptions {
  tasks: number;
  concurrency: number;
  /** Stop starting lifecycles after this long (all started ones still finish). */
  durationMs?: number;
  gateways: number;
  workers: number;
  chaos: ChaosPlan[];
  /** What the stack's Postgres looks like (database-topology.ts); default `direct`. */
  topology?: DatabaseTopology;
  /** `cluster`: the stack on a local Redis Cluster (REDIS_CLUSTER_NODES); default one node. */
  redisTopology?: RedisTopology;
  /** How long each plan runs before the next one, when several run. */
  chaosPhaseMs: number;
  /**
   * End the load (no new lifecycle; started ones finish) once every plan had this many phases;
   * unset: the chaos runs for as long as the load does.
   */
  chaosPasses?: number;
  seed: number;
  taskBoundMs: number;
  leaseMs: number;
  /** Where history.jsonl goes (a temp dir when unset). */
  dir?: string;
  /** An existing deployment instead of a stack of our own. */
  target?: { url: string; tenants: Record<TenantRole, Tenant> };
  /** More environment for every gateway and worker (the soak's short ttl and retention). */
  env?: Record<string, string>;
  /**
   * Run on a Postgres server of the run's own (initdb'd, server defaults plus these settings)
   * instead of a scratch database on the shared server: the soak's storage figures need the
   * server's own autovacuum, which a CI server may have switched off.
   */
  privatePostgres?: Record<string, string>;
  log(line: string): void;
}

/**
 * The load stopped early because a chaos round threw: the processes were torn down and the
 * history up to then written (no final reads, no check: what the round broke stays broken).
 */
export class ChaosFailedError extends Error {
  constructor(
    readonly failure: ChaosRoundError,
    readonly historyPath: string,
  ) {
    super(`${failure.message}; the load stopped early; history: ${historyPath}`, {
      cause: failure,
    });
    this.name = 'ChaosFailedError';
  }
}

export interface LoadRun {
  historyPath: string;
  records: HistoryRecord[];
  check: CheckResult;
}

export interface Topology {
  endpoints: Endpoint[];
  tenants: Record<TenantRole, Tenant>;
  stack?: StackHandle;
  servers: Partial<Record<'redis' | 'postgres', RestartableServer>>;
  cluster?: FailoverCluster;
  pooler?: PgBouncer;
  replicas?: ReplicaSet;
  redisCluster?: { cluster: RedisCluster; queueKey: string };
  links: Map<string, WorkerLinks>;
  /** The stack's database, with the ledger opened in it, and the total it opened with. */
  ledger?: { databaseUrl: string; openingTotal: number };
  teardown(): Promise<void>;
}

/** What starting the processes needs of the run's options (the soak starts them too). */
export type TopologyOptions = Pick<
  LoadOptions,
  | 'target'
  | 'chaos'
  | 'topology'
  | 'redisTopology'
  | 'gateways'
  | 'workers'
  | 'leaseMs'
  | 'env'
  | 'privatePostgres'
  | 'log'
>;

/** What a topology started, for its teardown. */
interface StartedParts {
  servers: Topology['servers'];
  owned: PrivateServer[];
  links: Map<string, WorkerLinks>;
  database?: TestDatabase;
  cluster?: FailoverCluster;
  pooler?: PgBouncer;
  replicas?: ReplicaSet;
  redisCluster?: RedisCluster;
  stack?: StackHandle;
  /** The shared Redis's prefix the stack's queue used: its keys go with the run. */
  redis?: TestRedis;
}

async function stopParts(parts: StartedParts): Promise<void> {
  await parts.stack?.stop(10_000);
  for (const link of parts.links.values()) {
    await link.postgres.close();
    await link.redis.close();
  }
  await parts.redis?.deleteKeys().catch(() => undefined);
  await parts.pooler?.destroy();
  await parts.database?.drop().catch(() => undefined);
  for (const server of parts.owned) await server.stop();
  await parts.cluster?.stop();
  await parts.replicas?.stop();
  await parts.redisCluster?.stop();
}

/** A run against a URL: nothing to start, nothing to stop. */
function targetTopology(target: NonNullable<TopologyOptions['target']>): Topology {
  const { url, tenants } = target;
  return {
    endpoints: [{ replica: 'target', url }],
    tenants,
    servers: {},
    links: new Map(),
    teardown: async () => {},
  };
}

/** The plans that need the one Redis node cannot run on a Redis Cluster. */
function refuseSingleNodePlansOnCluster(options: TopologyOptions, onRedisCluster: boolean): void {
  const singleNodePlans = options.chaos.filter((p) =>
    (p.needs ?? []).some((need) => need === 'redis' || need === 'worker-links'),
  );
  if (onRedisCluster && singleNodePlans.length > 0)
    throw new Error(
      `on a Redis Cluster, ${singleNodePlans.map((p) => p.name).join(', ')} cannot run (they need the one Redis node of the default topology); use kill-redis-master`,
    );
}

/** The run's Postgres: replicas, a failover cluster, a private server or a scratch database. */
async function startPostgres(
  options: TopologyOptions,
  needs: Set<string>,
  parts: StartedParts,
): Promise<{ databaseUrl: string; readUrl?: string }> {
  const { servers } = parts;
  if (options.topology === 'replicas') {
    // Its own primary (restartable by postgres-restart) and two replicas, one 1 s behind.
    const replicas = await startReplicaTopology();
    parts.replicas = replicas;
    servers.postgres = restartable(replicas.primary);
    options.log(
      `replicas: primary ${replicas.primary.port}, ${replicas.replicas.length} replicas behind reader endpoint ${replicas.readerEndpoint.port}`,
    );
    return { databaseUrl: replicas.primaryUrl(), readUrl: replicas.readerUrl() };
  }
  if (needs.has('failover-cluster')) {
    // A primary and a synchronous standby; a restart plan restarts whichever is primary now.
    const cluster = await startFailoverCluster({ databases: ['loadtest'] });
    parts.cluster = cluster;
    await cluster.addStandby();
    const { primary } = cluster;
    servers.postgres = {
      name: 'postgres',
      pid: () => cluster.primary.pid(),
      restart: () => cluster.restartPrimary(),
    };
    options.log(`failover cluster: primary ${primary.name}, standby ${cluster.standby?.name}`);
    return { databaseUrl: cluster.writeUrl('loadtest'), readUrl: cluster.readUrl('loadtest') };
  }
  if (needs.has('postgres') || options.privatePostgres !== undefined) {
    const server = await startPrivatePostgres(options.privatePostgres);
    parts.owned.push(server);
    servers.postgres = server;
    return { databaseUrl: server.url };
  }
  const database = await createTestDatabase('loadtest');
  parts.database = database;
  return { databaseUrl: database.connectionString };
}

/** Each worker reaches Postgres and Redis through proxies of its own (the partition plan). */
async function startWorkerLinks(
  workers: number,
  serviceUrl: string,
  redisUrl: string,
  links: Map<string, WorkerLinks>,
): Promise<void> {
  for (let i = 1; i <= workers; i += 1) {
    links.set(`worker-${i}`, {
      postgres: await startTcpProxy({ target: serviceUrl }),
      redis: await startTcpProxy({ target: redisUrl }),
    });
  }
}

/** The gateways, workers and proxy of the run, on the URLs the topology set up. */
function startLoadStack(
  options: TopologyOptions,
  parts: StartedParts,
  urls: { serviceUrl: string; readUrl?: string; redisUrl: string; redisPrefix: string },
  topologyEnv: Record<string, string>,
  onLogLine: (text: string) => void,
): Promise<StackHandle> {
  const { serviceUrl, readUrl, redisUrl } = urls;
  const { links, redisCluster } = parts;
  return startStack({
    gateways: options.gateways,
    workers: options.workers,
    databaseUrl: serviceUrl,
    redisUrl,
    ...(redisCluster === undefined ? {} : { redisClusterNodes: redisCluster.nodesSetting }),
    workerConnections: (workerId) => {
      const link = links.get(workerId);
      return link === undefined
        ? {}
        : {
            databaseUrl: link.postgres.urlFor(serviceUrl),
            redisUrl: link.redis.urlFor(redisUrl),
          };
    },
    redisPrefix: urls.redisPrefix,
    proxyPort: 0,
    // The run's own credentials, whatever the shell exports: its clients use the demo tenants.
    env: {
      MCP_AUTH: 'tokens',
      MCP_TOKENS: DEMO_MCP_TOKENS,
      REQUEST_STATE_SECRET: DEMO_REQUEST_STATE_SECRET,
      LEASE_MS: String(options.leaseMs),
      // Beside the built-in packs: transfer_funds, whose ledger the checker reads at the end.
      MCP_TOOL_MODULES: LEDGER_MODULE,
      STEP_LOG: 'on',
      LOG_LEVEL: 'warn',
      // Gateways read tasks/get from the standby, as in a deployment with a read replica.
      ...(readUrl === undefined ? {} : { DATABASE_READ_URL: readUrl }),
      ...topologyEnv,
      ...options.env,
    },
    logSink: (line) => {
      if (line.role === 'worker' && line.stream === 'stdout') onLogLine(line.text);
    },
  });
}

/** The started topology as the run sees it: endpoints, tenants, the parts chaos acts on. */
function describeTopology(
  parts: StartedParts,
  started: StackHandle,
  redisPrefix: string,
  ledger: { databaseUrl: string; openingTotal: number },
  teardown: () => Promise<void>,
): Topology {
  const { redisCluster } = parts;
  const tenantOf = (principal: string, tenant: string): Tenant => {
    const token = started.tokens[principal];
    if (token === undefined) throw new Error(`the stack has no token for ${principal}`);
    return { name: tenant, token };
  };
  return {
    endpoints: [
      ...started.gateways.map((g) => ({ replica: g.name, url: `${g.url}/mcp` })),
      { replica: 'proxy', url: started.url },
    ],
    tenants: { heavy: tenantOf('alice', 'acme'), light: tenantOf('mallory', 'globex') },
    stack: started,
    servers: parts.servers,
    cluster: parts.cluster,
    pooler: parts.pooler,
    replicas: parts.replicas,
    // The apps hash-tag the prefix on a cluster: `{prefix}`, whose slot holds every queue key.
    ...(redisCluster === undefined
      ? {}
      : { redisCluster: { cluster: redisCluster, queueKey: `{${redisPrefix}}` } }),
    links: parts.links,
    ledger,
    teardown,
  };
}

export async function startTopology(
  options: TopologyOptions,
  onLogLine: (text: string) => void,
): Promise<Topology> {
  if (options.target !== undefined) return targetTopology(options.target);
  const needs = new Set(options.chaos.flatMap((p) => p.needs ?? []));
  const parts: StartedParts = { servers: {}, owned: [], links: new Map() };
  const teardown = () => stopParts(parts);
  const onRedisCluster = options.redisTopology === 'cluster' || needs.has('redis-cluster');
  refuseSingleNodePlansOnCluster(options, onRedisCluster);
  try {
    let privateRedis: PrivateServer | undefined;
    if (needs.has('redis')) {
      privateRedis = await startPrivateRedis();
      parts.owned.push(privateRedis);
      parts.servers.redis = privateRedis;
    }
    const { databaseUrl, readUrl } = await startPostgres(options, needs, parts);
    const topologyEnv: Record<string, string> = {};
    const openingTotal = await openLedger(databaseUrl);
    // What the processes use as DATABASE_URL: the pooler, when there is one.
    let serviceUrl = databaseUrl;
    if (options.topology === 'pooler') {
      const started = await startPoolerTopology(databaseUrl);
      parts.pooler = started.bouncer;
      serviceUrl = started.pooledUrl;
      Object.assign(topologyEnv, started.env);
      options.log(`pooler: PgBouncer (transaction mode) on ${started.bouncer.port}`);
    }
    const redis = await createTestRedis('loadtest');
    const redisUrl = privateRedis?.url ?? redis.url;
    // A private Redis goes with its server; on the shared one the run's keys are deleted.
    if (privateRedis === undefined && !onRedisCluster) parts.redis = redis;
    if (onRedisCluster) {
      parts.redisCluster = await startRedisCluster();
      options.log(`Redis Cluster: ${parts.redisCluster.nodesSetting}`);
    }
    if (needs.has('worker-links'))
      await startWorkerLinks(options.workers, serviceUrl, redisUrl, parts.links);
    const urls = { serviceUrl, readUrl, redisUrl, redisPrefix: redis.prefix };
    parts.stack = await startLoadStack(options, parts, urls, topologyEnv, onLogLine);
    const ledger = { databaseUrl, openingTotal };
    return describeTopology(parts, parts.stack, redis.prefix, ledger, teardown);
  } catch (error) {
    // Whatever failed after a process started must stop it: a run that cannot start exits.
    await teardown();
    throw error;
  }
}

/** The history's run record: the bound on a task's life and the run's settings. */
function recordRunHeader(recorder: HistoryRecorder, options: LoadOptions): void {
  recorder.run({
    taskBoundMs: options.taskBoundMs,
    seed: String(options.seed),
    config: {
      tasks: options.tasks,
      concurrency: options.concurrency,
      gateways: options.gateways,
      workers: options.workers,
      chaos: options.chaos.map((p) => p.name),
      topology: options.topology ?? 'direct',
      // Reads from replicas that lag (one by 1 s) may show an answered input pending that long.
      ...(options.topology === 'replicas' ? { staleReadMs: REPLICA_STALE_READ_MS } : {}),
      redisTopology: options.redisTopology ?? 'single',
      leaseMs: options.leaseMs,
      target: options.target?.url ?? null,
    },
  });
}

/**
 * The chaos plans against the started processes, in rounds until the load is done (or for the
 * given passes). A failed round is kept and stops the load at once.
 */
function startChaos(
  options: LoadOptions,
  topology: Topology,
  run: {
    recorder: HistoryRecorder;
    steps: ReturnType<typeof createStepTracker>;
    stopChaos: AbortSignal;
    stopLoad: AbortController;
    onEvent: () => void;
  },
) {
  const { recorder, steps, stopLoad } = run;
  let chaosFailure: ChaosRoundError | undefined;
  let chaosPassesDone = false;
  const chaosDone: Promise<ChaosRounds> =
    topology.stack === undefined || options.chaos.length === 0
      ? Promise.resolve([])
      : runChaos(
          options.chaos,
          {
            gateways: topology.stack.gateways,
            workers: topology.stack.workers,
            servers: topology.servers,
            cluster: topology.cluster,
            pooler: topology.pooler,
            replicas: topology.replicas?.replicas,
            ...(topology.redisCluster === undefined ? {} : { redisCluster: topology.redisCluster }),
            links: topology.links,
            recorder,
            rng: createRng(options.seed ^ 0x5bd1e995),
            leaseMs: options.leaseMs,
            busyWorkers: () => steps.busyWorkers(),
            signal: run.stopChaos,
            onEvent: run.onEvent,
          },
          options.chaosPhaseMs,
          options.chaosPasses,
        )
          .then((rounds) => {
            chaosPassesDone = options.chaosPasses !== undefined;
            return rounds;
          })
          .catch((error: unknown) => {
            // Handled now, not once the clients are done (an unhandled rejection that crashed the
            // CLI): what the round broke stays broken, so the load stops at once.
            chaosFailure =
              error instanceof ChaosRoundError
                ? error
                : new ChaosRoundError('(runChaos)', 0, error, []);
            stopLoad.abort();
            return chaosFailure.rounds;
          });
  return {
    done: chaosDone,
    failure: () => chaosFailure,
    passesDone: () => chaosPassesDone,
  };
}

/** After the load: every created task read from every replica, and the ledger's closing total. */
async function readBack(
  options: LoadOptions,
  topology: Topology,
  ctx: LoadContext,
  recorder: HistoryRecorder,
  created: { taskId: string; tenant: TenantRole }[],
): Promise<void> {
  // Give the last restarted processes a moment to be reachable before the final reads.
  await sleep(1_000);
  options.log(`load done: ${created.length} tasks; reading each from every replica`);
  await readFinals(ctx, created, options.concurrency);
  if (topology.ledger !== undefined) {
    const { databaseUrl, openingTotal } = topology.ledger;
    await recordLedger(databaseUrl, recorder, openingTotal);
  }
}

/**
 * The load test: starts the topology, runs C simulated clients through the seeded mix while the
 * chaos plans run, reads every task back from every replica, and checks the history.
 */
export async function runLoad(options: LoadOptions): Promise<LoadRun> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'loadtest-')));
  await mkdir(dir, { recursive: true });
  const historyPath = join(dir, 'history.jsonl');
  const recorder = createHistoryRecorder(historyPath);
  const steps = createStepTracker();
  const topology = await startTopology(options, (text) => {
    const step = parseStepLogLine(text);
    if (step === undefined) return;
    recorder.step(step);
    steps.see(step);
  });
  options.log(
    `topology: ${topology.endpoints.map((e) => `${e.replica} ${e.url}`).join(', ')}; history ${historyPath}`,
  );
  // Aborted when a chaos round fails: no lifecycle starts after it, and running ones stop.
  const stopLoad = new AbortController();
  const ctx: LoadContext = {
    recorder,
    endpoints: topology.endpoints,
    tenants: topology.tenants,
    taskBoundMs: options.taskBoundMs,
    stop: stopLoad.signal,
  };
  recordRunHeader(recorder, options);

  const plans = generateMix(options.seed, options.tasks, { ledger: topology.ledger !== undefined });
  const counts = { created: 0, finished: 0, errors: 0, chaos: 0 };
  const progress = createRunProgress({ total: plans.length });
  const created: { taskId: string; tenant: TenantRole }[] = [];
  const stopChaos = new AbortController();
  const chaos = startChaos(options, topology, {
    recorder,
    steps,
    stopChaos: stopChaos.signal,
    stopLoad,
    onEvent: () => {
      counts.chaos += 1;
      progress.update(counts);
    },
  });
  const startedAt = Date.now();
  let next = 0;
  const client = async () => {
    while (next < plans.length) {
      if (stopLoad.signal.aborted || chaos.passesDone()) return;
      if (options.durationMs !== undefined && Date.now() - startedAt > options.durationMs) return;
      const plan = plans[next++]!;
      const outcome = await runLifecycle(ctx, plan);
      if (outcome.taskId !== undefined) {
        created.push({ taskId: outcome.taskId, tenant: plan.tenant });
        counts.created += 1;
      }
      counts.finished += 1;
      counts.errors += outcome.errors;
      progress.update(counts);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, client));
    stopChaos.abort();
    const rounds = await chaos.done;
    progress.stop();
    if (rounds.length > 0) recorder.chaosRounds({ plans: rounds });
    if (chaos.failure() === undefined) await readBack(options, topology, ctx, recorder, created);
  } finally {
    stopChaos.abort();
    stopLoad.abort();
    progress.stop();
    await topology.teardown();
    await recorder.close();
  }
  const chaosFailure = chaos.failure();
  if (chaosFailure !== undefined) throw new ChaosFailedError(chaosFailure, historyPath);
  const records = await readHistory(historyPath);
  return { historyPath, records, check: checkHistory(records) };
}
