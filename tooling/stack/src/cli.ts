// `pnpm stack`: the docker compose topology as local processes, in one terminal, until Ctrl-C.
import { join, relative } from 'node:path';
import { parseArgs, styleText } from 'node:util';
import {
  startAuthorizationServer,
  startRedisCluster,
  type AuthorizationServer,
  type LogLine,
  type RedisCluster,
} from '@mcp-tasks/testing';
import {
  STACK_TOPOLOGIES,
  startStackDatabase,
  type StackDatabase,
  type StackTopology,
} from './database-topology.js';
import {
  DEMO_CONSOLE_TOKEN,
  DEMO_OAUTH_CLIENTS,
  DEMO_OAUTH_SCOPE,
  DEMO_TOKENS,
} from './demo-credentials.js';
import { StackStartError } from './preflight.js';
import {
  DEFAULT_DATABASE_URL,
  DEFAULT_REDIS_PREFIX,
  DEFAULT_REDIS_URL,
  repoRoot,
  startStack,
  type StackHandle,
} from './stack.js';
import { removeStateFile, stackState, writeStateFile } from './state-file.js';

const USAGE = `usage: pnpm stack [--gateways N] [--workers N] [--port P] [--proxy nginx|node] [--oauth]
                  [--topology direct|pooler|replicas|cluster] [--internal-ports fixed|free]
                  [--state FILE]

Runs migrations, N gateways (default 3), N workers (default 2) and nginx (infra/nginx/nginx.conf)
(or, when nginx is not installed or --proxy node, a streaming Node proxy)
on 127.0.0.1:P (default 8080), on Postgres DATABASE_URL (default ${DEFAULT_DATABASE_URL}) and
Redis REDIS_URL (default ${DEFAULT_REDIS_URL}). Every app variable (MCP_TOKENS, LOG_LEVEL, …)
set in the environment is passed to the processes. Ctrl-C stops everything gracefully.
--oauth also starts a test OAuth authorization server (oidc-provider, demo clients) and runs the
gateways with MCP_AUTH=jwt behind it, so a stock MCP client can log in by itself.
--topology pooler puts a PgBouncer of its own (transaction mode) in front of DATABASE_URL;
--topology replicas runs a private primary and two streaming replicas (one 1 s late) behind one
reader endpoint instead of DATABASE_URL (docs/deployment.md);
--topology cluster starts a local Redis Cluster (3 masters, 3 replicas: redis-server and redis-cli
must be installed) and runs the apps on it with REDIS_CLUSTER_NODES; REDIS_CLUSTER_NODES in the
environment instead runs them on that cluster.
Gateways listen on 18101…, workers serve /metrics on 18201…; --internal-ports free puts them on
free ephemeral ports instead (two stacks side by side, e.g. in tests). --state FILE writes the
state other terminals read (default .stack/state.json) elsewhere.`;

const COLOURS = ['cyan', 'green', 'yellow', 'magenta', 'blue', 'red', 'white'] as const;
const useColour = process.stdout.isTTY && process.env.NO_COLOR === undefined;
const colourOf = new Map<string, (typeof COLOURS)[number]>();

function paint(name: string, text: string): string {
  if (!useColour) return text;
  let colour = colourOf.get(name);
  if (colour === undefined) {
    colour = COLOURS[colourOf.size % COLOURS.length] ?? 'white';
    colourOf.set(name, colour);
  }
  return styleText(colour, text);
}

function printLine(line: LogLine): void {
  const prefix = paint(line.name, `${line.name.padEnd(10)}|`);
  (line.stream === 'stderr' ? process.stderr : process.stdout).write(`${prefix} ${line.text}\n`);
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) {
    process.stderr.write(
      `pnpm stack: --${name} must be a whole number, got "${value}"\n${USAGE}\n`,
    );
    process.exit(2);
  }
  return parsed;
}

function banner(
  stack: StackHandle,
  oauth: AuthorizationServer | undefined,
  database: StackDatabase,
  statePath: string,
): string {
  const state = relative(repoRoot, statePath).startsWith('..')
    ? statePath
    : relative(repoRoot, statePath);
  const lines = [
    '',
    `mcp-tasks stack is up: ${stack.gateways.length} gateways, ${stack.workers.length} workers, ${stack.proxyKind === 'nginx' ? 'nginx (infra/nginx/nginx.conf)' : 'the Node proxy'}`,
    `  endpoint   ${stack.url}`,
    `  console    ${new URL('/console', stack.url).href}   (operator token ${process.env.MCP_CONSOLE_TOKENS === undefined ? `${DEMO_CONSOLE_TOKEN}; DEMO value, all tenants, actions` : 'from MCP_CONSOLE_TOKENS'})`,
  ];
  if (database.description !== undefined) lines.push(`  postgres   ${database.description}`);
  if (oauth !== undefined) {
    lines.push(
      `  issuer     ${oauth.issuer}   (test authorization server; scope ${DEMO_OAUTH_SCOPE})`,
    );
    for (const client of DEMO_OAUTH_CLIENTS) {
      lines.push(
        `  client     ${client.clientId} / ${client.clientSecret}   (tenant ${client.tenant}; DEMO value)`,
      );
    }
    const first = DEMO_OAUTH_CLIENTS[0];
    lines.push(
      `  try        pnpm cli login --url ${stack.url} --client-id ${first.clientId} --client-secret ${first.clientSecret}`,
      `  state      ${state}`,
      '  Ctrl-C stops every process gracefully.',
      '',
    );
    return lines.join('\n');
  }
  for (const [principal, token] of Object.entries(stack.tokens)) {
    const demo = DEMO_TOKENS.find((t) => t.token === token);
    lines.push(
      `  ${principal.padEnd(9)}  Authorization: Bearer ${token}${demo ? `   (tenant ${demo.tenant}; DEMO value)` : ''}`,
    );
  }
  lines.push(`  state      ${state}`, '  Ctrl-C stops every process gracefully.', '');
  return lines.join('\n');
}

/** The options, checked: a wrong value prints the usage and exits with 2; --help exits at once. */
function parseOptions() {
  const { values } = parseArgs({
    options: {
      gateways: { type: 'string' },
      workers: { type: 'string' },
      port: { type: 'string' },
      proxy: { type: 'string' },
      oauth: { type: 'boolean' },
      topology: { type: 'string' },
      'internal-ports': { type: 'string' },
      state: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return undefined;
  }
  if (values.proxy !== undefined && values.proxy !== 'nginx' && values.proxy !== 'node') {
    process.stderr.write(
      `pnpm stack: --proxy must be nginx or node, got "${values.proxy}"\n${USAGE}\n`,
    );
    process.exit(2);
  }
  const topology = values.topology ?? 'direct';
  if (topology !== 'cluster' && !(STACK_TOPOLOGIES as readonly string[]).includes(topology)) {
    process.stderr.write(
      `pnpm stack: --topology must be ${[...STACK_TOPOLOGIES, 'cluster'].join(', ')}, got "${values.topology}"\n${USAGE}\n`,
    );
    process.exit(2);
  }
  const internalPorts = values['internal-ports'] ?? 'fixed';
  if (internalPorts !== 'fixed' && internalPorts !== 'free') {
    process.stderr.write(
      `pnpm stack: --internal-ports must be fixed or free, got "${internalPorts}"\n${USAGE}\n`,
    );
    process.exit(2);
  }
  // Narrowed by the check above.
  const proxy: 'nginx' | 'node' | undefined = values.proxy;
  return { values, topology, internalPorts, proxy };
}

type CliOptions = NonNullable<ReturnType<typeof parseOptions>>;

/** With --oauth: an authorization server for the proxy's /mcp, and the gateways' JWT settings. */
async function startOAuth(values: CliOptions['values'], proxyPort: number) {
  let oauth: AuthorizationServer | undefined;
  let oauthEnv: Record<string, string> = {};
  if (values.oauth === true) {
    if (proxyPort === 0) {
      process.stderr.write(
        'pnpm stack: --oauth needs a fixed --port (the resource URL names it)\n',
      );
      process.exit(2);
    }
    // The public URL of /mcp (through the proxy) is the resource clients ask tokens for.
    const resource = `http://127.0.0.1:${proxyPort}/mcp`;
    oauth = await startAuthorizationServer({
      resources: { [resource]: { scope: DEMO_OAUTH_SCOPE } },
      clients: DEMO_OAUTH_CLIENTS,
    });
    oauthEnv = {
      MCP_AUTH: 'jwt',
      MCP_JWT_ISSUER: oauth.issuer,
      MCP_JWT_AUDIENCE: resource,
      MCP_JWT_REQUIRED_SCOPE: DEMO_OAUTH_SCOPE,
    };
  }

  return { oauth, oauthEnv };
}

/** The database of the topology, then the stack; a failure stops what started and exits with 1. */
async function startCliStack(
  { values, topology, internalPorts, proxy }: CliOptions,
  proxyPort: number,
  oauth: AuthorizationServer | undefined,
  oauthEnv: Record<string, string>,
  redisCluster: RedisCluster | undefined,
): Promise<{ stack: StackHandle; database: StackDatabase }> {
  const redisClusterNodes =
    redisCluster?.nodesSetting ?? (process.env.REDIS_CLUSTER_NODES || undefined);
  let stack: StackHandle;
  let database: StackDatabase | undefined;
  try {
    database = await startStackDatabase(
      topology === 'cluster' ? 'direct' : (topology as StackTopology),
      process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
    );
    stack = await startStack({
      gateways: positive('gateways', values.gateways, 3),
      workers: positive('workers', values.workers, 2),
      proxyPort,
      env: { ...database.env, ...oauthEnv },
      ...(internalPorts === 'fixed'
        ? { gatewayBasePort: 18100, workerMetricsBasePort: 18200 }
        : {}),
      databaseUrl: database.databaseUrl,
      redisUrl: process.env.REDIS_URL || DEFAULT_REDIS_URL,
      ...(redisClusterNodes === undefined ? {} : { redisClusterNodes }),
      redisPrefix: process.env.REDIS_PREFIX || DEFAULT_REDIS_PREFIX,
      logSink: printLine,
      ...(proxy === undefined ? {} : { proxy }),
    });
  } catch (error) {
    const message = error instanceof StackStartError ? error.message : String(error);
    process.stderr.write(`pnpm stack: ${message}\n`);
    await oauth?.close();
    await database?.stop();
    await redisCluster?.stop();
    process.exit(1);
  }
  return { stack, database };
}

/** Logs a process that exits on its own; Ctrl-C stops everything gracefully, twice kills. */
function handleExitAndSignals(
  stack: StackHandle,
  stopOthers: () => Promise<void>,
  statePath: string,
  log: (text: string) => void,
): void {
  let stopping = false;
  for (const p of stack.processes) {
    void p.exited().then((status) => {
      if (!stopping) log(`${p.name} (pid ${p.pid}) exited: ${String(status)}`);
    });
  }
  const shutdown = async (signal: string) => {
    if (stopping) {
      log(`${signal} again: killing every process`);
      for (const p of stack.processes) p.kill('SIGKILL');
      return;
    }
    stopping = true;
    log(`${signal}: stopping gracefully (Ctrl-C again to kill)`);
    await stack.stop();
    await stopOthers();
    await removeStateFile(statePath);
    log('every process stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

async function main(): Promise<void> {
  const options = parseOptions();
  if (options === undefined) return;
  const { values, topology } = options;
  const statePath = values.state ?? join(repoRoot, '.stack', 'state.json');
  const log = (text: string) => printLine({ name: 'stack', role: 'stack', stream: 'stdout', text });
  const started = Date.now();

  const proxyPort = positive('port', values.port, 8080);
  const { oauth, oauthEnv } = await startOAuth(values, proxyPort);

  let redisCluster: RedisCluster | undefined;
  if (topology === 'cluster') {
    redisCluster = await startRedisCluster();
    log(`Redis Cluster: ${redisCluster.nodesSetting}`);
  }

  const { stack, database } = await startCliStack(
    options,
    proxyPort,
    oauth,
    oauthEnv,
    redisCluster,
  );
  await writeStateFile(statePath, stackState(stack));
  process.stdout.write(banner(stack, oauth, database, statePath));
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const stopOthers = async () => {
    await oauth?.close();
    await database.stop();
    await redisCluster?.stop();
  };
  handleExitAndSignals(stack, stopOthers, statePath, log);
}

await main();
