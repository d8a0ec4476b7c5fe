import { wakeUpGraceProblem, parseDatabaseSettings, type DatabaseSettings } from '@mcp-tasks/store';
import { redisEndpointFromEnv, type RedisEndpoint } from '@mcp-tasks/queue';
import { TOOL_PACKS } from '@mcp-tasks/tools';
import { parseTracingEnv, type TracingSettings } from '@mcp-tasks/tracing';
import { parseConsoleTokens, type ConsoleOperator } from './console/operators.js';
import { buildAuth, type AuthConfig } from './env/auth.js';
import { EnvSchema, parseFields, splitList, type Env } from './env/schema.js';
import type { ListenLimits } from './mcp/listen-limits.js';
import type { TenantLimits } from './quotas/tenant-admission.js';

export {
  parseTokenList,
  type AuthConfig,
  type ResourceMetadataConfig,
  type TokenEntry,
} from './env/auth.js';
export { DEFAULT_TENANT_LIMITS } from './env/schema.js';

/**
 * The gateway's whole configuration, parsed once from the environment. Nothing else in the app
 * reads `process.env`; `createGateway` takes this object, so tests build it directly.
 */
export interface GatewayConfig {
  databaseUrl: string;
  /** DATABASE_DIRECT_URL, DATABASE_POOLER, DATABASE_PREPARED_STATEMENTS with DATABASE_URL. */
  database: DatabaseSettings;
  /** DATABASE_READ_URL: one replica, or several (comma list) that reads are spread over. */
  databaseReadUrls: string[];
  /** DATABASE_POOL_IDLE_TIMEOUT_MS: how long an idle pooled connection is kept; 0 keeps it. */
  databasePoolIdleTimeoutMs: number;
  /** REDIS_URL (one node) or REDIS_CLUSTER_NODES (a Redis Cluster). */
  redis: RedisEndpoint;
  /** REDIS_PREFIX as set; the queue package hash-tags it on a cluster (effectivePrefix). */
  redisPrefix: string | undefined;
  port: number;
  host: string;
  auth: AuthConfig;
  requestStateSecret: string;
  /** True when the dev default secret is in use (only allowed with MCP_AUTH=none). */
  requestStateSecretIsDevDefault: boolean;
  requestStateTtlMs: number;
  toolPacks: string[] | undefined;
  /** Tool modules loaded beside the packs (MCP_TOOL_MODULES): package names or ./paths. */
  toolModules?: string[];
  maxBodyBytes: number;
  pollRateLimit: boolean;
  requestTimeoutMs: number;
  /** Exact origins allowed; `undefined` = no Origin header or a loopback origin only; `'*'` = any. */
  allowedOrigins: string[] | '*' | undefined;
  taskTtlMs: number;
  taskPollIntervalMs: number;
  visibilityTimeoutMs: number;
  /** MCP_CREATE_QUEUE_MAX: creates waiting for the next INSERT at most; more are refused (503). */
  createQueueMax: number;
  /** MCP_CREATE_QUEUE_MAX_AGE_MS: how long a create may wait for its INSERT before it is refused. */
  createQueueMaxAgeMs: number;
  /** MCP_WAKE_UP_LINGER_MS: how long a wake-up waits for others to share its job (0: none). */
  wakeUpLingerMs: number;
  sseKeepAliveMs: number;
  listenLimits: ListenLimits;
  /** TENANT_MAX_IN_FLIGHT, TENANT_CREATE_RATE, TENANT_CREATE_BURST (0 turns one off). */
  tenantLimits: TenantLimits;
  shutdownGraceMs: number;
  shutdownDelayMs: number;
  migrateOnStart: boolean;
  logLevel: string;
  /** From OpenTelemetry's own variables (OTEL_*); absent or off: nothing is traced. */
  tracing?: TracingSettings;
  /** MCP_CONSOLE_TOKENS: the operator console's credentials; undefined: no console (404). */
  consoleOperators: ConsoleOperator[] | undefined;
  /** MCP_CONSOLE_ROLE_CLAIM (MCP_AUTH=jwt only): the JWT claim that grants console access. */
  consoleRoleClaim: string | undefined;
}

/** Used only with MCP_AUTH=none, where there is no identity worth protecting; main logs a warning. */
export const DEV_REQUEST_STATE_SECRET = 'mcp-tasks-dev-request-state-secret-not-for-production';

/** Every variable the gateway reads, with its schema: deployment files are checked against it. */
export const GATEWAY_ENV_SCHEMA = EnvSchema;

export type EnvResult = { ok: true; config: GatewayConfig } | { ok: false; problems: string[] };

/** REQUEST_STATE_SECRET, or the development secret where MCP_AUTH=none allows it. */
function parseRequestStateSecret(
  env: Partial<Env>,
  problems: string[],
): { requestStateSecret: string | undefined; requestStateSecretIsDevDefault: boolean } {
  let requestStateSecret = env.REQUEST_STATE_SECRET;
  let requestStateSecretIsDevDefault = false;
  if (requestStateSecret === undefined) {
    if (env.MCP_AUTH === 'none') {
      requestStateSecret = DEV_REQUEST_STATE_SECRET;
      requestStateSecretIsDevDefault = true;
    } else if (env.MCP_AUTH !== undefined) {
      problems.push('REQUEST_STATE_SECRET: required (at least 32 characters) unless MCP_AUTH=none');
    }
  } else if (requestStateSecret.length < 32) {
    problems.push('REQUEST_STATE_SECRET: must be at least 32 characters');
  }
  return { requestStateSecret, requestStateSecretIsDevDefault };
}

/** MCP_ALLOWED_ORIGINS: undefined (unset), '*', or the origins (scheme://host[:port]). */
function parseAllowedOrigins(
  env: Partial<Env>,
  problems: string[],
): GatewayConfig['allowedOrigins'] {
  const origins = splitList(env.MCP_ALLOWED_ORIGINS);
  let allowedOrigins: GatewayConfig['allowedOrigins'];
  if (origins === undefined) allowedOrigins = undefined;
  else if (origins.includes('*')) allowedOrigins = '*';
  else {
    allowedOrigins = [];
    for (const origin of origins) {
      if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
        problems.push(`MCP_ALLOWED_ORIGINS: "${origin}" is not an origin (scheme://host[:port])`);
      } else allowedOrigins.push(origin);
    }
  }
  return allowedOrigins;
}

/** MCP_TOOL_PACKS: the named packs, each one this build has. */
function parseToolPacks(env: Partial<Env>, problems: string[]): string[] | undefined {
  const toolPacks = splitList(env.MCP_TOOL_PACKS);
  const unknownPacks = (toolPacks ?? []).filter(
    (pack) => !(TOOL_PACKS as readonly string[]).includes(pack),
  );
  if (unknownPacks.length > 0) {
    problems.push(
      `MCP_TOOL_PACKS: unknown pack(s) ${unknownPacks.map((pack) => JSON.stringify(pack)).join(', ')}; valid packs: ${TOOL_PACKS.join(', ')}`,
    );
  }
  return toolPacks;
}

/** The DATABASE_* settings together (@mcp-tasks/store), each problem said once. */
function parseDatabase(
  cleaned: Record<string, string | undefined>,
  problems: string[],
): ReturnType<typeof parseDatabaseSettings> {
  const database = parseDatabaseSettings(cleaned);
  if (!database.ok) {
    // A field that failed its own schema is already reported above.
    const reported = new Set(problems.map((problem) => problem.split(':')[0]));
    problems.push(...database.problems.filter((problem) => !reported.has(problem.split(':')[0])));
  }
  return database;
}

/** MCP_CONSOLE_TOKENS, and MCP_CONSOLE_ROLE_CLAIM only with MCP_AUTH=jwt. */
function parseConsole(
  env: Partial<Env>,
  problems: string[],
): ReturnType<typeof parseConsoleTokens> | undefined {
  const consoleTokens =
    env.MCP_CONSOLE_TOKENS === undefined ? undefined : parseConsoleTokens(env.MCP_CONSOLE_TOKENS);
  problems.push(...(consoleTokens?.problems ?? []));
  if (env.MCP_CONSOLE_ROLE_CLAIM !== undefined && env.MCP_AUTH !== 'jwt')
    problems.push(
      'MCP_CONSOLE_ROLE_CLAIM: only with MCP_AUTH=jwt (it names a claim of the JWTs that MCP_AUTH=jwt verifies)',
    );
  return consoleTokens;
}

/** Parses the environment, collecting every problem instead of stopping at the first. */
export function parseEnv(source: Record<string, string | undefined>): EnvResult {
  // An empty variable means "unset": shells and manifests often export KEY= for optional values.
  const cleaned = Object.fromEntries(
    Object.entries(source).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const { env, problems } = parseFields(cleaned);
  const redis = redisEndpointFromEnv(env);
  if (!redis.ok) problems.push(redis.problem);
  const auth = buildAuth(env, problems);

  const { requestStateSecret, requestStateSecretIsDevDefault } = parseRequestStateSecret(
    env,
    problems,
  );

  const allowedOrigins = parseAllowedOrigins(env, problems);
  const toolPacks = parseToolPacks(env, problems);

  const database = parseDatabase(cleaned, problems);

  if (env.ENQUEUE_GRACE_MS !== undefined && env.MCP_VISIBILITY_TIMEOUT_MS !== undefined) {
    const problem = wakeUpGraceProblem(env.ENQUEUE_GRACE_MS, env.MCP_VISIBILITY_TIMEOUT_MS);
    if (problem !== undefined) problems.push(problem);
  }

  const tracing = parseTracingEnv(source);
  if (!tracing.ok) problems.push(...tracing.problems);

  const consoleTokens = parseConsole(env, problems);

  if (problems.length > 0 || auth === undefined || !tracing.ok || !database.ok || !redis.ok)
    return { ok: false, problems };
  // Every field parsed (a failed one is a problem above), so the partial env is complete.
  return buildConfig(
    env as Env,
    redis.endpoint,
    auth,
    requestStateSecret ?? '',
    requestStateSecretIsDevDefault,
    {
      allowedOrigins,
      toolPacks,
      tracing: tracing.settings,
      consoleOperators: consoleTokens?.operators,
      database: database.settings,
    },
  );
}

function buildConfig(
  env: Env,
  redis: RedisEndpoint,
  auth: AuthConfig,
  requestStateSecret: string,
  requestStateSecretIsDevDefault: boolean,
  lists: Pick<
    GatewayConfig,
    'allowedOrigins' | 'toolPacks' | 'tracing' | 'consoleOperators' | 'database'
  >,
): EnvResult {
  const { allowedOrigins, toolPacks, tracing, consoleOperators, database } = lists;
  return {
    ok: true,
    config: {
      databaseUrl: env.DATABASE_URL,
      database,
      databaseReadUrls: splitList(env.DATABASE_READ_URL) ?? [],
      databasePoolIdleTimeoutMs: env.DATABASE_POOL_IDLE_TIMEOUT_MS,
      redis,
      redisPrefix: env.REDIS_PREFIX,
      port: env.PORT,
      host: env.HOST,
      auth,
      requestStateSecret,
      requestStateSecretIsDevDefault,
      requestStateTtlMs: env.MCP_REQUEST_STATE_TTL_MS,
      toolPacks,
      toolModules: splitList(env.MCP_TOOL_MODULES) ?? [],
      maxBodyBytes: env.MCP_MAX_BODY_BYTES,
      pollRateLimit: env.MCP_POLL_RATE_LIMIT === 'on',
      requestTimeoutMs: env.MCP_REQUEST_TIMEOUT_MS,
      allowedOrigins,
      taskTtlMs: env.TASK_TTL_MS,
      taskPollIntervalMs: env.TASK_POLL_INTERVAL_MS,
      visibilityTimeoutMs: env.MCP_VISIBILITY_TIMEOUT_MS,
      createQueueMax: env.MCP_CREATE_QUEUE_MAX,
      createQueueMaxAgeMs: env.MCP_CREATE_QUEUE_MAX_AGE_MS,
      wakeUpLingerMs: env.MCP_WAKE_UP_LINGER_MS,
      sseKeepAliveMs: env.MCP_SSE_KEEPALIVE_MS,
      listenLimits: {
        maxStreams: env.MCP_LISTEN_MAX_STREAMS,
        maxStreamsPerPrincipal: env.MCP_LISTEN_STREAMS_PER_PRINCIPAL,
        maxTaskIds: env.MCP_LISTEN_MAX_TASK_IDS,
        maxBufferedBytes: env.MCP_LISTEN_BUFFER_BYTES,
        loadConcurrency: env.MCP_LISTEN_LOAD_CONCURRENCY,
        flagTtlMs: env.MCP_LISTEN_FLAG_TTL_MS,
      },
      tenantLimits: {
        maxInFlight: env.TENANT_MAX_IN_FLIGHT,
        createRatePerS: env.TENANT_CREATE_RATE,
        createBurst: env.TENANT_CREATE_BURST,
      },
      shutdownGraceMs: env.MCP_SHUTDOWN_GRACE_MS,
      shutdownDelayMs: env.MCP_SHUTDOWN_DELAY_MS,
      migrateOnStart: env.MCP_MIGRATE_ON_START === 'true',
      logLevel: env.LOG_LEVEL,
      tracing,
      consoleOperators,
      consoleRoleClaim: env.MCP_CONSOLE_ROLE_CLAIM,
    },
  };
}
