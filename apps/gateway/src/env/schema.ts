import {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CREATE_WAIT_MS,
  DEFAULT_MAX_WAITING_CREATES,
  DEFAULT_WAKE_UP_LINGER_MS,
} from '@mcp-tasks/store';
import { z } from 'zod';
import { DEFAULT_LISTEN_LIMITS } from '../mcp/listen-limits.js';
import type { TenantLimits } from '../quotas/tenant-admission.js';

// Every variable the gateway reads, each parsed on its own (env.ts: the cross-field rules).

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Per tenant: 10,000 tasks accepted and not finished, and 100 creates a second (200 at once)
 * across all gateways. Generous for one tenant's real use, tight enough that one tenant cannot
 * fill the database or the create path for everyone (docs/adr/0003).
 */
export const DEFAULT_TENANT_LIMITS: TenantLimits = {
  maxInFlight: 10_000,
  createRatePerS: 100,
  createBurst: 200,
};

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalText = z.string().min(1).optional();
const url = z.string().refine((value) => URL.canParse(value), 'must be a URL');

export const EnvSchema = z.object({
  DATABASE_URL: url,
  DATABASE_DIRECT_URL: url.optional(),
  DATABASE_POOLER: z.enum(['none', 'transaction']).optional(),
  DATABASE_PREPARED_STATEMENTS: z.enum(['on', 'off']).optional(),
  DATABASE_READ_URL: z
    .string()
    .refine(
      (value) => splitList(value)?.every((entry) => URL.canParse(entry)) === true,
      'must be a URL, or a comma list of URLs (one per replica)',
    )
    .optional(),
  DATABASE_POOL_IDLE_TIMEOUT_MS: z.coerce.number().int().min(0).default(DEFAULT_IDLE_TIMEOUT_MS),
  REDIS_URL: url.optional(),
  /** Comma list of host:port seeds of a Redis Cluster; instead of REDIS_URL. */
  REDIS_CLUSTER_NODES: optionalText,
  REDIS_PREFIX: optionalText,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  MCP_AUTH: z.enum(['tokens', 'jwt', 'none'], {
    error: 'is required: one of tokens, jwt, none (none must be chosen explicitly)',
  }),
  MCP_TOKENS: optionalText,
  MCP_JWT_SECRET: optionalText,
  MCP_JWKS_URL: url.optional(),
  MCP_JWT_TENANT_CLAIM: z.string().min(1).default('tenant'),
  MCP_JWT_ISSUER: optionalText,
  MCP_JWT_AUDIENCE: optionalText,
  MCP_JWT_TYP: optionalText,
  MCP_JWT_MAX_TOKEN_AGE_S: positiveInt(86_400),
  MCP_JWT_REQUIRED_SCOPE: optionalText,
  MCP_JWKS_REFETCH_COOLDOWN_MS: z.coerce.number().int().min(0).default(30_000),
  MCP_RESOURCE_URL: url.optional(),
  MCP_AUTHORIZATION_SERVERS: optionalText,
  REQUEST_STATE_SECRET: optionalText,
  MCP_REQUEST_STATE_TTL_MS: positiveInt(600_000),
  MCP_TOOL_PACKS: optionalText,
  MCP_TOOL_MODULES: optionalText,
  MCP_MAX_BODY_BYTES: positiveInt(1024 * 1024),
  MCP_POLL_RATE_LIMIT: z.enum(['on', 'off']).default('off'),
  MCP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  MCP_ALLOWED_ORIGINS: optionalText,
  TASK_TTL_MS: positiveInt(3_600_000),
  TASK_POLL_INTERVAL_MS: positiveInt(1000),
  MCP_VISIBILITY_TIMEOUT_MS: positiveInt(5000),
  MCP_CREATE_QUEUE_MAX: positiveInt(DEFAULT_MAX_WAITING_CREATES),
  MCP_CREATE_QUEUE_MAX_AGE_MS: positiveInt(DEFAULT_MAX_CREATE_WAIT_MS),
  MCP_WAKE_UP_LINGER_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(DEFAULT_WAKE_UP_LINGER_MS),
  /** The workers' sweeper grace: read only to refuse a value too short for this gateway. */
  ENQUEUE_GRACE_MS: z.coerce.number().int().min(0).optional(),
  MCP_SSE_KEEPALIVE_MS: positiveInt(15_000),
  MCP_LISTEN_MAX_STREAMS: positiveInt(DEFAULT_LISTEN_LIMITS.maxStreams),
  MCP_LISTEN_STREAMS_PER_PRINCIPAL: positiveInt(DEFAULT_LISTEN_LIMITS.maxStreamsPerPrincipal),
  MCP_LISTEN_MAX_TASK_IDS: positiveInt(DEFAULT_LISTEN_LIMITS.maxTaskIds),
  MCP_LISTEN_BUFFER_BYTES: positiveInt(DEFAULT_LISTEN_LIMITS.maxBufferedBytes),
  MCP_LISTEN_LOAD_CONCURRENCY: positiveInt(DEFAULT_LISTEN_LIMITS.loadConcurrency),
  MCP_LISTEN_FLAG_TTL_MS: positiveInt(DEFAULT_LISTEN_LIMITS.flagTtlMs),
  TENANT_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(DEFAULT_TENANT_LIMITS.maxInFlight),
  TENANT_CREATE_RATE: z.coerce.number().int().min(0).default(DEFAULT_TENANT_LIMITS.createRatePerS),
  TENANT_CREATE_BURST: positiveInt(DEFAULT_TENANT_LIMITS.createBurst),
  MCP_SHUTDOWN_GRACE_MS: positiveInt(10_000),
  MCP_SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  MCP_MIGRATE_ON_START: z.enum(['true', 'false']).default('false'),
  MCP_CONSOLE_TOKENS: optionalText,
  MCP_CONSOLE_ROLE_CLAIM: optionalText,
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
});

export type Env = z.infer<typeof EnvSchema>;

export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/**
 * Each variable on its own, so one bad value does not hide the others: the variables that parse
 * are kept for the cross-field checks, the rest become problems.
 */
export function parseFields(cleaned: Record<string, string | undefined>): {
  env: Partial<Env>;
  problems: string[];
} {
  const env: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, schema] of Object.entries(EnvSchema.shape)) {
    const parsed = schema.safeParse(cleaned[key]);
    if (parsed.success) env[key] = parsed.data;
    else
      for (const issue of parsed.error.issues)
        problems.push(`${[key, ...issue.path].join('.')}: ${issue.message}`);
  }
  return { env, problems };
}
