import { parseTracingEnv, type TracingSettings } from '@mcp-tasks/tracing';
import { hostname } from 'node:os';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  wakeUpGraceProblem,
  minimumWakeUpGraceMs,
  parseDatabaseSettings,
  type DatabaseSettings,
} from '@mcp-tasks/store';
import { redisEndpointFromEnv, type RedisEndpoint } from '@mcp-tasks/queue';
import { TOOL_PACKS, type ToolPack } from '@mcp-tasks/tools';
import { z } from 'zod';
import type { RetryPolicy } from './attempt/retry-policy.js';
import { DEFAULT_TOOL_MISSING_FAIL_AFTER_MS } from './attempt/tool-mismatch.js';

const int = (min: number) => z.coerce.number().int().min(min);

const EnvSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  /** The session work (LISTEN, the sweeper's leadership lock) when DATABASE_URL is a pooler. */
  DATABASE_DIRECT_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** What DATABASE_URL leads to: `transaction` for PgBouncer (or a managed pooler) in that mode. */
  DATABASE_POOLER: z.enum(['none', 'transaction']).optional(),
  /** Named prepared statements; default off with DATABASE_POOLER=transaction, on otherwise. */
  DATABASE_PREPARED_STATEMENTS: z.enum(['on', 'off']).optional(),
  /** How long an idle pooled connection is kept before it is closed; 0 keeps it. */
  DATABASE_POOL_IDLE_TIMEOUT_MS: int(0).default(DEFAULT_IDLE_TIMEOUT_MS),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** Comma list of host:port seeds of a Redis Cluster; instead of REDIS_URL. */
  REDIS_CLUSTER_NODES: z.string().min(1).optional(),
  REDIS_PREFIX: z.string().min(1).optional(),
  WORKER_CONCURRENCY: int(1).default(8),
  LEASE_MS: int(500).default(30_000),
  SWEEP_INTERVAL_MS: int(50).default(5_000),
  /** Rows per sweeper statement (expire, wake orphans, delete). */
  SWEEP_BATCH_SIZE: int(1).max(50_000).default(1_000),
  /** How long each sweep step may keep taking batches before leaving the rest to the next sweep. */
  SWEEP_STEP_BUDGET_MS: int(0).default(2_000),
  /**
   * How long the sweeper leader may go without a word to Postgres before Postgres ends its lock
   * session; 0: no bound. Longer than a sweep (three step budgets, see crossChecks).
   */
  SWEEP_LEADER_TIMEOUT_MS: int(0).default(60_000),
  /**
   * How long a wake-up may sit in the queue before the sweeper sends another; default LEASE_MS,
   * at least minimumWakeUpGraceMs(MCP_VISIBILITY_TIMEOUT_MS) (a shorter explicit value is refused).
   */
  ENQUEUE_GRACE_MS: int(0).optional(),
  /** The gateways' replica wait bound: read only to keep the grace above their create window. */
  MCP_VISIBILITY_TIMEOUT_MS: int(1).default(5_000),
  MAX_ATTEMPTS: int(1).default(3),
  /** First retry delay after an unexpected error; doubles per failure. */
  RETRY_BASE_DELAY_MS: int(1).default(250),
  /** Longest retry delay; never more than ENQUEUE_GRACE_MS (see toConfig). */
  RETRY_MAX_DELAY_MS: int(1).default(10_000),
  REPORT_STEP_MS: int(0).default(500),
  TASK_RETENTION_MS: int(0).default(24 * 60 * 60 * 1_000),
  MCP_TOOL_PACKS: z
    .string()
    .default(TOOL_PACKS.join(','))
    .transform((value) =>
      value
        .split(',')
        .map((pack) => pack.trim())
        .filter((pack) => pack.length > 0),
    )
    .pipe(z.array(z.enum(TOOL_PACKS)).min(1)),
  /** Comma list of tool modules to load beside the packs: package names or ./paths (from the cwd). */
  MCP_TOOL_MODULES: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((specifier) => specifier.trim())
        .filter((specifier) => specifier.length > 0),
    ),
  /** How long a task whose tool no worker has is left for other workers before it fails. */
  TOOL_MISSING_FAIL_AFTER_MS: int(0).default(DEFAULT_TOOL_MISSING_FAIL_AFTER_MS),
  METRICS_PORT: int(0).max(65_535).default(9464),
  WORKER_ID: z.string().min(1).default(`${hostname()}-${process.pid}`),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_GRACE_MS: int(0).default(10_000),
  /** `on`: log each step's start and end (task, step, epoch, worker) for audits and load tests. */
  STEP_LOG: z.enum(['on', 'off']).default('off'),
});

type Env = z.infer<typeof EnvSchema>;

/**
 * The worker's whole configuration, parsed once from the environment. Nothing else in the app
 * reads `process.env`; `createWorker` takes this object, so tests build it directly.
 */
export interface WorkerConfig {
  databaseUrl: string;
  /** DATABASE_DIRECT_URL, DATABASE_POOLER, DATABASE_PREPARED_STATEMENTS with DATABASE_URL. */
  database: DatabaseSettings;
  databasePoolIdleTimeoutMs: number;
  /** REDIS_URL (one node) or REDIS_CLUSTER_NODES (a Redis Cluster). */
  redis: RedisEndpoint;
  /** REDIS_PREFIX as set; the queue package hash-tags it on a cluster (effectivePrefix). */
  redisPrefix: string | undefined;
  /** WORKER_CONCURRENCY: tasks run at once by this process. */
  concurrency: number;
  leaseMs: number;
  sweepIntervalMs: number;
  sweepBatchSize: number;
  sweepStepBudgetMs: number;
  /** SWEEP_LEADER_TIMEOUT_MS: the leadership session's idle_session_timeout; 0 for none. */
  sweepLeaderTimeoutMs: number;
  /** ENQUEUE_GRACE_MS, defaulting to the lease (at least the gateways' create window). */
  wakeUpGraceMs: number;
  /** MAX_ATTEMPTS and the retry delays, the delays capped to the wake-up grace. */
  retry: RetryPolicy;
  reportStepMs: number;
  taskRetentionMs: number;
  toolPacks: ToolPack[];
  toolModules: string[];
  toolMissingFailAfterMs: number;
  /** 0: no /healthz and /metrics server. */
  metricsPort: number;
  workerId: string;
  logLevel: Env['LOG_LEVEL'];
  shutdownGraceMs: number;
  /** STEP_LOG=on. */
  stepLog: boolean;
  /** From OpenTelemetry's own variables (OTEL_*); absent or off: nothing is traced. */
  tracing?: TracingSettings;
}

function toConfig(env: Env, database: DatabaseSettings, redis: RedisEndpoint): WorkerConfig {
  const wakeUpGraceMs =
    env.ENQUEUE_GRACE_MS ??
    Math.max(env.LEASE_MS, minimumWakeUpGraceMs(env.MCP_VISIBILITY_TIMEOUT_MS));
  // A delayed retry is marked enqueued when sent, and that mark holds the sweeper off only for
  // the grace: a longer delay would be woken again early, skipping the rest of the backoff.
  const maxDelayMs = Math.max(1, Math.min(env.RETRY_MAX_DELAY_MS, wakeUpGraceMs));
  return {
    databaseUrl: env.DATABASE_URL,
    database,
    databasePoolIdleTimeoutMs: env.DATABASE_POOL_IDLE_TIMEOUT_MS,
    redis,
    redisPrefix: env.REDIS_PREFIX,
    concurrency: env.WORKER_CONCURRENCY,
    leaseMs: env.LEASE_MS,
    sweepIntervalMs: env.SWEEP_INTERVAL_MS,
    sweepBatchSize: env.SWEEP_BATCH_SIZE,
    sweepStepBudgetMs: env.SWEEP_STEP_BUDGET_MS,
    sweepLeaderTimeoutMs: env.SWEEP_LEADER_TIMEOUT_MS,
    wakeUpGraceMs,
    retry: {
      maxAttempts: env.MAX_ATTEMPTS,
      baseDelayMs: Math.min(env.RETRY_BASE_DELAY_MS, maxDelayMs),
      maxDelayMs,
    },
    reportStepMs: env.REPORT_STEP_MS,
    taskRetentionMs: env.TASK_RETENTION_MS,
    toolPacks: env.MCP_TOOL_PACKS,
    toolModules: env.MCP_TOOL_MODULES,
    toolMissingFailAfterMs: env.TOOL_MISSING_FAIL_AFTER_MS,
    metricsPort: env.METRICS_PORT,
    workerId: env.WORKER_ID,
    logLevel: env.LOG_LEVEL,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    stepLog: env.STEP_LOG === 'on',
  };
}

/** What one variable cannot say alone: bounds that depend on another. */
function crossChecks(env: Env): string[] {
  const problems: string[] = [];
  if (env.ENQUEUE_GRACE_MS !== undefined) {
    const problem = wakeUpGraceProblem(env.ENQUEUE_GRACE_MS, env.MCP_VISIBILITY_TIMEOUT_MS);
    if (problem !== undefined) problems.push(problem);
  }
  const longestSweepMs = 3 * env.SWEEP_STEP_BUDGET_MS;
  if (env.SWEEP_LEADER_TIMEOUT_MS > 0 && env.SWEEP_LEADER_TIMEOUT_MS <= longestSweepMs) {
    problems.push(
      `SWEEP_LEADER_TIMEOUT_MS: ${env.SWEEP_LEADER_TIMEOUT_MS} ms is not longer than a sweep may take (3 × SWEEP_STEP_BUDGET_MS = ${longestSweepMs} ms), so a busy leader would lose its lock mid-sweep; raise it, or set 0 for no bound`,
    );
  }
  return problems;
}

/** Every variable the worker reads, with its schema: deployment files are checked against it. */
export const WORKER_ENV_SCHEMA = EnvSchema;

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid worker environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EnvError';
  }
}

/** Parses the worker's environment once, reporting every problem at the same time. */
export function parseEnv(source: Record<string, string | undefined>): WorkerConfig {
  // An empty variable means "unset" (compose files and k8s often render optional vars as "").
  const cleaned = Object.fromEntries(
    Object.entries(source).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = EnvSchema.safeParse(cleaned);
  const tracing = parseTracingEnv(source);
  const tracingProblems = tracing.ok ? [] : tracing.problems;
  if (parsed.success) {
    const problems = [...crossChecks(parsed.data), ...tracingProblems];
    const database = parseDatabaseSettings(cleaned);
    if (!database.ok) problems.push(...database.problems);
    const redis = redisEndpointFromEnv(parsed.data);
    if (!redis.ok) problems.push(redis.problem);
    if (problems.length > 0 || !tracing.ok || !database.ok || !redis.ok)
      throw new EnvError(problems);
    return {
      ...toConfig(parsed.data, database.settings, redis.endpoint),
      tracing: tracing.settings,
    };
  }
  throw new EnvError([
    ...parsed.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`),
    ...tracingProblems,
  ]);
}
