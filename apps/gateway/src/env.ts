import { parseConsoleTokens, type ConsoleOperator } from './console/operators.js';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CREATE_WAIT_MS,
  DEFAULT_MAX_WAITING_CREATES,
  wakeUpGraceProblem,
  parseDatabaseSettings,
  type DatabaseSettings,
} from '@mcp-tasks/store';
import { redisEndpointFromEnv, type RedisEndpoint } from '@mcp-tasks/queue';
import { TOOL_PACKS } from '@mcp-tasks/tools';
import { parseTracingEnv, type TracingSettings } from '@mcp-tasks/tracing';
import { z } from 'zod';
import { isSafeJwksUrl } from './auth/jwks-url.js';
import { DEFAULT_LISTEN_LIMITS, type ListenLimits } from './mcp/listen-limits.js';
import type { TenantLimits } from './quotas/tenant-admission.js';

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

export type AuthConfig =
  | { mode: 'none' }
  | { mode: 'tokens'; tokens: TokenEntry[] }
  | {
      mode: 'jwt';
      secret: string | undefined;
      jwksUrl: string | undefined;
      tenantClaim: string;
      issuer: string | undefined;
      audience: string;
      typ: string | undefined;
      maxTokenAgeSeconds: number;
      /** Every one of these must be granted (`scope` or `scp` claim); none when empty. */
      requiredScopes: string[];
      /** MCP_JWKS_REFETCH_COOLDOWN_MS: least time between two key fetches an unknown `kid` causes. */
      jwksRefetchCooldownMs: number;
      /** What RFC 9728 metadata says; undefined when there is no public URL to name. */
      resourceMetadata: ResourceMetadataConfig | undefined;
    };

/** The Protected Resource Metadata (RFC 9728) a stock MCP client reads to find where to log in. */
export interface ResourceMetadataConfig {
  /** The public URL of /mcp, as clients reach it (through the proxy or ingress). */
  resource: string;
  authorizationServers: string[];
  scopesSupported: string[];
}

export interface TokenEntry {
  token: string;
  tenant: string;
  principal: string;
}

/** Used only with MCP_AUTH=none, where there is no identity worth protecting; main logs a warning. */
export const DEV_REQUEST_STATE_SECRET = 'mcp-tasks-dev-request-state-secret-not-for-production';

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

const EnvSchema = z.object({
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

type Env = z.infer<typeof EnvSchema>;

/** Every variable the gateway reads, with its schema: deployment files are checked against it. */
export const GATEWAY_ENV_SCHEMA = EnvSchema;

export type EnvResult = { ok: true; config: GatewayConfig } | { ok: false; problems: string[] };

function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/** `token:tenant:principal,...`; the token itself may not contain `:` or `,`. */
export function parseTokenList(value: string): { tokens: TokenEntry[]; problems: string[] } {
  const tokens: TokenEntry[] = [];
  const problems: string[] = [];
  for (const [index, entry] of (splitList(value) ?? []).entries()) {
    const parts = entry.split(':');
    const [token, tenant, principal] = parts;
    if (parts.length !== 3 || !token || !tenant || !principal) {
      problems.push(`MCP_TOKENS: entry ${index + 1} must be token:tenant:principal`);
      continue;
    }
    if (token.length < 16)
      problems.push(`MCP_TOKENS: entry ${index + 1} token is shorter than 16 characters`);
    // The first match would win silently, handing one caller another's tenant.
    const earlier = tokens.findIndex((entry) => entry.token === token);
    if (earlier >= 0)
      problems.push(`MCP_TOKENS: entry ${index + 1} repeats the token of entry ${earlier + 1}`);
    tokens.push({ token, tenant, principal });
  }
  if (tokens.length === 0 && problems.length === 0) problems.push('MCP_TOKENS: no token entries');
  return { tokens, problems };
}

/**
 * Each variable on its own, so one bad value does not hide the others: the variables that parse
 * are kept for the cross-field checks, the rest become problems.
 */
function parseFields(cleaned: Record<string, string | undefined>): {
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

/** Undefined when MCP_AUTH itself is invalid: the mode's own requirements are then unknown. */
function buildAuth(env: Partial<Env>, problems: string[]): AuthConfig | undefined {
  switch (env.MCP_AUTH) {
    case undefined:
      return undefined;
    case 'none':
      return { mode: 'none' };
    case 'tokens': {
      if (env.MCP_TOKENS === undefined) {
        problems.push('MCP_TOKENS: required when MCP_AUTH=tokens');
        return { mode: 'tokens', tokens: [] };
      }
      const parsed = parseTokenList(env.MCP_TOKENS);
      problems.push(...parsed.problems);
      return { mode: 'tokens', tokens: parsed.tokens };
    }
    case 'jwt':
      return buildJwtAuth(env, problems);
  }
}

const isHttpUrl = (value: string): boolean =>
  URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol);

/**
 * Keys come from MCP_JWT_SECRET, from MCP_JWKS_URL, or (neither set) from the issuer's own
 * metadata (RFC 8414 / OpenID discovery), so MCP_JWT_ISSUER alone is enough.
 */
function buildJwtAuth(env: Partial<Env>, problems: string[]): AuthConfig {
  const secret = env.MCP_JWT_SECRET;
  const jwksUrl = env.MCP_JWKS_URL;
  const issuer = env.MCP_JWT_ISSUER;
  if (secret !== undefined && jwksUrl !== undefined) {
    problems.push('MCP_JWT_SECRET / MCP_JWKS_URL: set one, not both');
  } else if (secret === undefined && jwksUrl === undefined && issuer === undefined) {
    problems.push(
      "MCP_JWT_ISSUER: required when MCP_AUTH=jwt without MCP_JWT_SECRET or MCP_JWKS_URL (the keys are discovered from the issuer's metadata)",
    );
  }
  if (secret !== undefined && secret.length < 32) {
    problems.push('MCP_JWT_SECRET: must be at least 32 characters');
  }
  if (env.MCP_JWT_AUDIENCE === undefined) {
    problems.push(
      'MCP_JWT_AUDIENCE: required when MCP_AUTH=jwt (the "aud" this server accepts; without it tokens the identity provider issued for other APIs would be accepted)',
    );
  }
  if (jwksUrl !== undefined && issuer === undefined) {
    problems.push(
      'MCP_JWT_ISSUER: required with MCP_JWKS_URL (the "iss" of the identity provider whose keys the JWKS publishes)',
    );
  }
  if (jwksUrl !== undefined && !isSafeJwksUrl(jwksUrl)) {
    problems.push(
      'MCP_JWKS_URL: must use https (plain http only for a loopback host: localhost, 127.0.0.0/8, [::1]); keys fetched over plain http can be replaced in transit',
    );
  }
  const discovers = secret === undefined && jwksUrl === undefined && issuer !== undefined;
  if (discovers && (!URL.canParse(issuer) || !isSafeJwksUrl(issuer))) {
    problems.push(
      'MCP_JWT_ISSUER: must be an https URL (plain http only for a loopback host) to discover the keys from it; or set MCP_JWKS_URL',
    );
  }
  const requiredScopes = (env.MCP_JWT_REQUIRED_SCOPE ?? '').split(' ').filter((s) => s !== '');
  return {
    mode: 'jwt',
    secret,
    jwksUrl,
    tenantClaim: env.MCP_JWT_TENANT_CLAIM ?? 'tenant',
    issuer,
    audience: env.MCP_JWT_AUDIENCE ?? '',
    typ: env.MCP_JWT_TYP,
    maxTokenAgeSeconds: env.MCP_JWT_MAX_TOKEN_AGE_S ?? 86_400,
    requiredScopes,
    jwksRefetchCooldownMs: env.MCP_JWKS_REFETCH_COOLDOWN_MS ?? 30_000,
    resourceMetadata: buildResourceMetadata(env, requiredScopes, problems),
  };
}

/**
 * The resource is MCP_RESOURCE_URL, else MCP_JWT_AUDIENCE when that is a URL (the usual case:
 * the audience clients ask for with RFC 8707 `resource` is the URL of /mcp). The authorization
 * servers are MCP_AUTHORIZATION_SERVERS, else the issuer. Without both, there is nothing a client
 * could use, so no metadata is served.
 */
function buildResourceMetadata(
  env: Partial<Env>,
  scopesSupported: string[],
  problems: string[],
): ResourceMetadataConfig | undefined {
  const audience = env.MCP_JWT_AUDIENCE;
  const resource =
    env.MCP_RESOURCE_URL ?? (audience !== undefined && isHttpUrl(audience) ? audience : undefined);
  if (resource !== undefined && !isHttpUrl(resource)) {
    problems.push('MCP_RESOURCE_URL: must be an http(s) URL (the public URL of /mcp)');
    return undefined;
  }
  const authorizationServers =
    splitList(env.MCP_AUTHORIZATION_SERVERS) ??
    (env.MCP_JWT_ISSUER === undefined ? [] : [env.MCP_JWT_ISSUER]);
  for (const server of authorizationServers) {
    if (!isHttpUrl(server)) {
      problems.push(`MCP_AUTHORIZATION_SERVERS: "${server}" is not an http(s) URL (an issuer)`);
    }
  }
  if (resource === undefined || authorizationServers.length === 0) return undefined;
  return { resource, authorizationServers, scopesSupported };
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

  const toolPacks = splitList(env.MCP_TOOL_PACKS);
  const unknownPacks = (toolPacks ?? []).filter(
    (pack) => !(TOOL_PACKS as readonly string[]).includes(pack),
  );
  if (unknownPacks.length > 0) {
    problems.push(
      `MCP_TOOL_PACKS: unknown pack(s) ${unknownPacks.map((pack) => JSON.stringify(pack)).join(', ')}; valid packs: ${TOOL_PACKS.join(', ')}`,
    );
  }

  const database = parseDatabaseSettings(cleaned);
  if (!database.ok) {
    // A field that failed its own schema is already reported above.
    const reported = new Set(problems.map((problem) => problem.split(':')[0]));
    problems.push(...database.problems.filter((problem) => !reported.has(problem.split(':')[0])));
  }

  if (env.ENQUEUE_GRACE_MS !== undefined && env.MCP_VISIBILITY_TIMEOUT_MS !== undefined) {
    const problem = wakeUpGraceProblem(env.ENQUEUE_GRACE_MS, env.MCP_VISIBILITY_TIMEOUT_MS);
    if (problem !== undefined) problems.push(problem);
  }

  const tracing = parseTracingEnv(source);
  if (!tracing.ok) problems.push(...tracing.problems);

  const consoleTokens =
    env.MCP_CONSOLE_TOKENS === undefined ? undefined : parseConsoleTokens(env.MCP_CONSOLE_TOKENS);
  problems.push(...(consoleTokens?.problems ?? []));
  if (env.MCP_CONSOLE_ROLE_CLAIM !== undefined && env.MCP_AUTH !== 'jwt')
    problems.push(
      'MCP_CONSOLE_ROLE_CLAIM: only with MCP_AUTH=jwt (it names a claim of the JWTs that MCP_AUTH=jwt verifies)',
    );

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
