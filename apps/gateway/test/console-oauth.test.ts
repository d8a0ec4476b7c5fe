import { createTask, type NewTask } from '@mcp-tasks/store';
import { newTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import {
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerClient,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayInfra,
  type GatewayInfra,
  type GatewayProcess,
} from './support/gateway-processes.js';

/**
 * Issue 27 item 1 against a real authorization server (oidc-provider): its RS256 JWT access
 * tokens, verified through the keys of its OpenID discovery by a real gateway process, log in to
 * the console when they carry the role claim (MCP_CONSOLE_ROLE_CLAIM), and only then.
 */
const RESOURCE = 'https://tasks.example.com/mcp';
const SCOPE = 'mcp:tasks';
const TOOL = 'oauth_console_tool';
const CLIENTS: AuthorizationServerClient[] = [
  {
    clientId: 'acme-ops',
    clientSecret: 'acme-ops-secret-0123456789',
    tenant: 'acme',
    claims: { mcp_console: 'acme' },
  },
  { clientId: 'acme-ci', clientSecret: 'acme-ci-secret-0123456789', tenant: 'acme' },
];

let idp: AuthorizationServer;
let infra: GatewayInfra;
let gateway: GatewayProcess;

beforeAll(async () => {
  idp = await startAuthorizationServer({
    resources: { [RESOURCE]: { scope: SCOPE } },
    clients: CLIENTS,
  });
  infra = await createGatewayInfra('gw_console_oauth', {
    MCP_AUTH: 'jwt',
    MCP_JWT_ISSUER: idp.issuer,
    MCP_JWT_AUDIENCE: RESOURCE,
    MCP_JWT_REQUIRED_SCOPE: SCOPE,
    MCP_CONSOLE_ROLE_CLAIM: 'mcp_console',
  });
  gateway = await infra.startGateway();
}, 60_000);

afterAll(async () => {
  await infra?.close();
  await idp?.close();
});

function newTask(owner: TaskOwner): NewTask {
  return {
    id: newTaskId(),
    owner,
    operation: { method: 'tools/call', toolName: TOOL, arguments: {} },
    ttlMs: 600_000,
    pollIntervalMs: 1000,
    statusMessage: null,
  };
}

async function login(token: string): Promise<Response> {
  return fetch(`${gateway.url}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
}

const tokenOf = (clientId: string) =>
  idp.clientCredentialsToken({ clientId, resource: RESOURCE, scope: SCOPE });

describe('console login with a token of a real authorization server', () => {
  it('logs in a token carrying the role claim and shows its tenant only', async () => {
    const mine = await createTask(infra.db, newTask({ tenant: 'acme', principal: 'a' }));
    const theirs = await createTask(infra.db, newTask({ tenant: 'globex', principal: 'g' }));
    const token = await tokenOf('acme-ops');
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toMatchObject({
      alg: 'RS256',
      typ: 'at+jwt',
    });
    const response = await login(token);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console');
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^mcp_console=j1\./);
    const list = await fetch(`${gateway.url}/console?tool=${TOOL}`, { headers: { cookie } });
    expect(list.status).toBe(200);
    const page = await list.text();
    expect(page).toContain(`data-id="${mine.task.id}"`);
    expect(page).not.toContain(theirs.task.id);
    const other = await fetch(`${gateway.url}/console/tasks/${theirs.task.id}`, {
      headers: { cookie },
    });
    expect(other.status).toBe(404);
  });

  it('refuses a token of the same server without the claim, with the console’s message', async () => {
    const response = await login(await tokenOf('acme-ci'));
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await response.text()).toContain(
      'That JWT has no &quot;mcp_console&quot; claim: it does not grant console access.',
    );
  });
});
