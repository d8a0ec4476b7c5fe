import { GATEWAY_ENV_SCHEMA, parseEnv as parseGatewayEnv } from '@mcp-tasks/gateway/env';
import { WORKER_ENV_SCHEMA, parseEnv as parseWorkerEnv } from '@mcp-tasks/worker/env';

export type AppRole = 'gateway' | 'worker' | 'migrate';
type Env = Record<string, string>;

/** The names each app's own env parser reads: the source of truth for every deployment file. */
export const ACCEPTED_NAMES: Record<AppRole, readonly string[]> = {
  gateway: Object.keys(GATEWAY_ENV_SCHEMA.shape),
  worker: Object.keys(WORKER_ENV_SCHEMA.shape),
  // The image's `migrate` command (packages/store/src/cli/migrate.ts) reads only DATABASE_URL and
  // DATABASE_DIRECT_URL (preferred: the migration lock needs a session, which a pooler cannot hold);
  // the shared app settings compose gives every app container are accepted there too.
  migrate: ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'REDIS_URL', 'LOG_LEVEL'],
};

/** Read by Node itself, not by an app's parser (a CA to trust, e.g. compose's dev Keycloak CA). */
const NODE_RUNTIME_NAMES: readonly string[] = ['NODE_EXTRA_CA_CERTS'];

/** Problems an app would report at start with exactly this environment (none = it starts). */
export function startupProblems(role: AppRole, env: Env): string[] {
  const unknown = Object.keys(env)
    .filter((name) => !ACCEPTED_NAMES[role].includes(name) && !NODE_RUNTIME_NAMES.includes(name))
    .map((name) => `${name}: not a variable the ${role} reads`);
  if (role === 'gateway') {
    const parsed = parseGatewayEnv(env);
    return [...unknown, ...(parsed.ok ? [] : parsed.problems)];
  }
  if (role === 'worker') {
    try {
      parseWorkerEnv(env);
      return unknown;
    } catch (error) {
      return [...unknown, (error as Error).message];
    }
  }
  const url = env.DATABASE_URL;
  return url !== undefined && URL.canParse(url) ? unknown : [...unknown, 'DATABASE_URL: required'];
}

/** A variable's default as the parser sees it when unset; `required` when it has none. */
export function defaultOf(role: 'gateway' | 'worker', name: string): unknown {
  const shape: Record<string, { safeParse(value: unknown): { success: boolean; data?: unknown } }> =
    role === 'gateway' ? GATEWAY_ENV_SCHEMA.shape : WORKER_ENV_SCHEMA.shape;
  const field = shape[name];
  if (field === undefined) throw new Error(`${role} does not read ${name}`);
  const parsed = field.safeParse(undefined);
  return parsed.success ? parsed.data : 'required';
}

export function parsesAs(role: 'gateway' | 'worker', name: string, value: string): boolean {
  const shape: Record<string, { safeParse(value: unknown): { success: boolean } }> =
    role === 'gateway' ? GATEWAY_ENV_SCHEMA.shape : WORKER_ENV_SCHEMA.shape;
  return shape[name]?.safeParse(value).success ?? false;
}
