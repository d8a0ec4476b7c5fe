import { hostname } from 'node:os';
import { TOOL_PACKS } from '@mcp-tasks/tools';
import { z } from 'zod';
import { DEFAULT_TOOL_MISSING_FAIL_AFTER_MS } from './tool-mismatch.js';

const int = (min: number) => z.coerce.number().int().min(min);

const EnvSchema = z
  .object({
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
    REDIS_URL: z.url({ protocol: /^rediss?$/ }),
    REDIS_PREFIX: z.string().min(1).optional(),
    WORKER_CONCURRENCY: int(1).default(8),
    LEASE_MS: int(500).default(30_000),
    SWEEP_INTERVAL_MS: int(50).default(5_000),
    /** Rows per sweeper statement (expire, re-dispatch, delete). */
    SWEEP_BATCH_SIZE: int(1).max(50_000).default(1_000),
    /** How long each sweep step may keep taking batches before leaving the rest to the next sweep. */
    SWEEP_STEP_BUDGET_MS: int(0).default(2_000),
    /** How long a wake-up may sit in the queue before the sweeper sends another; default LEASE_MS. */
    ENQUEUE_GRACE_MS: int(0).optional(),
    MAX_ATTEMPTS: int(1).default(3),
    /** First retry delay after an unexpected error; doubles per failure. */
    RETRY_BASE_DELAY_MS: int(1).default(250),
    /** Longest retry delay; never more than ENQUEUE_GRACE_MS (see the transform). */
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
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),
    SHUTDOWN_GRACE_MS: int(0).default(10_000),
    /** `on`: log each step's start and end (task, step, epoch, worker) for audits and load tests. */
    STEP_LOG: z.enum(['on', 'off']).default('off'),
  })
  .transform((env) => {
    const grace = env.ENQUEUE_GRACE_MS ?? env.LEASE_MS;
    // A delayed retry is marked enqueued when sent, and that mark holds the sweeper off only for
    // the grace: a longer delay would be re-dispatched early, skipping the rest of the backoff.
    const maxDelay = Math.max(1, Math.min(env.RETRY_MAX_DELAY_MS, grace));
    return {
      ...env,
      ENQUEUE_GRACE_MS: grace,
      RETRY_MAX_DELAY_MS: maxDelay,
      RETRY_BASE_DELAY_MS: Math.min(env.RETRY_BASE_DELAY_MS, maxDelay),
    };
  });

export type WorkerEnv = z.infer<typeof EnvSchema>;

/** Every variable the worker reads, with its schema: deployment files are checked against it. */
export const WORKER_ENV_SCHEMA = EnvSchema.in;

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid worker environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EnvError';
  }
}

/** Parses the worker's environment once, reporting every problem at the same time. */
export function parseEnv(source: Record<string, string | undefined>): WorkerEnv {
  // An empty variable means "unset" (compose files and k8s often render optional vars as "").
  const cleaned = Object.fromEntries(
    Object.entries(source).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = EnvSchema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new EnvError(
    parsed.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`),
  );
}
