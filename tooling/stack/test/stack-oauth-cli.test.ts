// `pnpm stack --oauth` as a newcomer runs it: the real command in its own process group, read from
// its banner, used as a stock client would (challenge → metadata → token → task), then Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestDatabase,
  createTestRedis,
  freePort,
  nodeArguments,
  repoRoot,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StackState } from '../src/state-file.js';
import { mcp } from './mcp.js';

// Its own state file and free internal ports: another stack may run beside this file's.
let stateDir: string;
let STATE_FILE: string;
let db: TestDatabase;
let redis: TestRedis;
let port: number;
let cli: ChildProcess;
let output = '';
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

interface Banner {
  endpoint: string;
  issuer: string;
  clients: { clientId: string; clientSecret: string; tenant: string }[];
}

/** What a person reads off the terminal once the stack is up. */
function readBanner(text: string): Banner {
  const endpoint = /^ {2}endpoint +(\S+)$/m.exec(text)?.[1];
  const issuer = /^ {2}issuer +(\S+) /m.exec(text)?.[1];
  const clients = [...text.matchAll(/^ {2}client +(\S+) \/ (\S+) +\(tenant (\w+);/gm)].map(
    ([, clientId = '', clientSecret = '', tenant = '']) => ({ clientId, clientSecret, tenant }),
  );
  if (endpoint === undefined || issuer === undefined) throw new Error(`no banner in:\n${text}`);
  return { endpoint, issuer, clients };
}

/** Resolves once `check()` holds; fails with the CLI's output after the deadline. */
async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group (the CLI and everything it started) still exists. */
function groupAlive(pgid: number): boolean {
  return alive(-pgid);
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return false;
  } catch (error) {
    return (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
  }
}

let banner: Banner;

beforeAll(async () => {
  db = await createTestDatabase('stack_oauth');
  redis = await createTestRedis('stack-oauth');
  port = await freePort();
  stateDir = await mkdtemp(join(tmpdir(), 'stack-oauth-cli-'));
  STATE_FILE = join(stateDir, 'state.json');
  // Its own process group, as a terminal gives a foreground job: Ctrl-C below signals the group.
  cli = spawn(
    process.execPath,
    [
      ...nodeArguments('tooling/stack/src/cli.ts'),
      '--oauth',
      '--gateways',
      '1',
      '--workers',
      '1',
      '--port',
      String(port),
      '--internal-ports',
      'free',
      '--state',
      STATE_FILE,
    ],
    {
      cwd: repoRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL: db.connectionString,
        REDIS_URL: redis.url,
        REDIS_PREFIX: redis.prefix,
        LOG_LEVEL: 'warn',
        REPORT_STEP_MS: '50',
      },
    },
  );
  cli.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cli.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  exited = new Promise((resolve) => cli.once('exit', (code, signal) => resolve({ code, signal })));
  await until(
    () => output.includes('Ctrl-C stops every process gracefully.') || cli.exitCode !== null,
    'the banner',
  );
  banner = readBanner(output);
});

afterAll(async () => {
  // Only if a test failed before the Ctrl-C: nothing of this file may outlive it.
  if (cli?.pid !== undefined && groupAlive(cli.pid)) process.kill(-cli.pid, 'SIGKILL');
  await redis?.deleteKeys();
  await db?.drop();
  if (stateDir !== undefined) await rm(stateDir, { recursive: true, force: true });
});

describe('pnpm stack --oauth', () => {
  it('prints the endpoint on the fixed port, the test issuer and the demo clients', () => {
    expect(banner.endpoint).toBe(`http://127.0.0.1:${port}/mcp`);
    expect(banner.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(banner.clients).toEqual([
      { clientId: 'demo-client-alice', clientSecret: 'demo-secret-alice', tenant: 'acme' },
      { clientId: 'demo-client-mallory', clientSecret: 'demo-secret-mallory', tenant: 'globex' },
    ]);
    expect(output).toContain(`  state      ${STATE_FILE}\n`);
    expect(output).toContain(
      `pnpm cli login --url ${banner.endpoint} --client-id demo-client-alice --client-secret demo-secret-alice`,
    );
  });

  it('answers a request without a token with a 401 naming the metadata and the scope', async () => {
    const response = await fetch(banner.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer realm="mcp", scope="mcp:tasks", resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('serves the protected resource metadata through the proxy, naming the started issuer', async () => {
    const response = await fetch(
      `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      resource: banner.endpoint,
      authorization_servers: [banner.issuer],
      scopes_supported: ['mcp:tasks'],
      bearer_methods_supported: ['header'],
      resource_name: 'mcp-tasks',
    });
  });

  it('runs a task to completion with a client-credentials token from the started issuer', async () => {
    const asMetadata = (await (
      await fetch(`${banner.issuer}/.well-known/oauth-authorization-server`)
    ).json()) as { issuer: string; token_endpoint: string };
    expect(asMetadata.issuer).toBe(banner.issuer);
    const alice = banner.clients[0];
    if (alice === undefined) throw new Error('no demo client printed');
    const tokenResponse = await fetch(asMetadata.token_endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${alice.clientId}:${alice.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        resource: banner.endpoint,
        scope: 'mcp:tasks',
      }),
    });
    expect(tokenResponse.status).toBe(200);
    const grant = (await tokenResponse.json()) as { access_token: string; token_type: string };
    expect(grant.token_type).toBe('Bearer');

    const created = await mcp(banner.endpoint, grant.access_token, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 1, label: 'stack-oauth' },
    });
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = String(created.body.result?.taskId);
    let status = 'working';
    for (let i = 0; i < 300 && status === 'working'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { body } = await mcp(banner.endpoint, grant.access_token, 'tasks/get', { taskId });
      status = String(body.result?.status);
    }
    expect(status).toBe('completed');
  });

  it('stops on Ctrl-C: exit 0, every process of the group gone, ports closed, state file removed', async () => {
    const state = JSON.parse(await readFile(STATE_FILE, 'utf8')) as StackState;
    expect(state.url).toBe(banner.endpoint);
    const pids = state.processes.map((p) => p.pid ?? 0);
    expect(state.processes.map((p) => p.name)).toEqual(['gateway-1', 'worker-1']);
    // --internal-ports free: not the fixed 18101 a stack started by hand would use.
    expect(state.processes[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(state.processes[0]?.url).not.toBe('http://127.0.0.1:18101');
    expect(pids.filter(alive)).toEqual(pids);
    const pgid = cli.pid ?? 0;

    // A terminal's Ctrl-C: SIGINT to the whole foreground group, children included.
    process.kill(-pgid, 'SIGINT');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(output).toMatch(/SIGINT: stopping gracefully[\s\S]*every process stopped/);
    await until(() => !groupAlive(pgid), 'the process group to be empty', 10_000);
    expect(pids.filter(alive)).toEqual([]);
    expect(await refused(`http://127.0.0.1:${port}/healthz`)).toBe(true);
    expect(await refused(`${banner.issuer}/.well-known/openid-configuration`)).toBe(true);
    expect(existsSync(STATE_FILE)).toBe(false);
  });
});
