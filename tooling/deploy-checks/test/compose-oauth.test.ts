// The compose profile `oauth` (docs/authorization.md): Keycloak over HTTPS with the realm file, and
// a gateway that takes its tokens. No Docker engine here, so: the real `docker-compose config`
// renders the profile, the realm file agrees with the gateway's settings field by field, and the
// dev certificate script's output is trusted by Node through NODE_EXTRA_CA_CERTS (real TLS).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startupProblems } from '../src/app-env.js';
import { repoRoot } from '../src/repo.js';

interface Service {
  image?: string;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: { published: number | string; target: number | string }[];
  depends_on?: Record<string, { condition: string }>;
}

interface Mapper {
  name: string;
  protocolMapper: string;
  config: Record<string, string>;
}

interface Realm {
  realm: string;
  clientScopes: { name: string; attributes: Record<string, string>; protocolMappers: Mapper[] }[];
  clients: {
    clientId: string;
    publicClient: boolean;
    secret?: string;
    serviceAccountsEnabled?: boolean;
    standardFlowEnabled?: boolean;
    directAccessGrantsEnabled?: boolean;
    redirectUris?: string[];
    attributes?: Record<string, string>;
    defaultClientScopes: string[];
    optionalClientScopes: string[];
    protocolMappers: Mapper[];
  }[];
}

/** `docker-compose config` as the deploy checks run it, rendered and parsed. */
function composeConfig(...profile: string[]): { services: Record<string, Service> } {
  const text = execFileSync(
    'docker-compose',
    ['-f', 'docker-compose.yml', ...profile.flatMap((p) => ['--profile', p]), 'config'],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  return parse(text) as { services: Record<string, Service> };
}

const compose = composeConfig('oauth');
const keycloak = compose.services.keycloak ?? {};
const gateway = compose.services['gateway-oauth'] ?? {};
const gatewayEnv = gateway.environment ?? {};
const keycloakEnv = keycloak.environment ?? {};

/** The container path a host path (relative to the repository) is mounted at. */
function mountOf(service: Service, hostPath: string): string | undefined {
  const entry = service.volumes?.find((v) => v.startsWith(`${join(repoRoot, hostPath)}:`));
  return entry?.split(':')[1];
}

describe('docker-compose --profile oauth config', () => {
  it('adds keycloak and gateway-oauth only under the profile', () => {
    expect(keycloak.profiles).toEqual(['oauth']);
    expect(gateway.profiles).toEqual(['oauth']);
    expect(compose.services.gateway?.profiles).toBeUndefined();
    expect(keycloak.image).toMatch(/^quay\.io\/keycloak\/keycloak:26\.\d+\.\d+$/);
  });

  it('runs Keycloak on HTTPS only, with the mounted dev certificate, importing the realm file', () => {
    expect(keycloak.command).toEqual(['start', '--import-realm']);
    expect(keycloakEnv.KC_HTTP_ENABLED).toBe('false');
    const certDir = mountOf(keycloak, 'infra/keycloak/certs');
    expect(certDir).toBe('/etc/keycloak-tls');
    expect(keycloakEnv.KC_HTTPS_CERTIFICATE_FILE).toBe(`${certDir}/keycloak.pem`);
    expect(keycloakEnv.KC_HTTPS_CERTIFICATE_KEY_FILE).toBe(`${certDir}/keycloak-key.pem`);
    expect(mountOf(keycloak, 'infra/keycloak/realm-mcp-tasks.json')).toBe(
      '/opt/keycloak/data/import/realm-mcp-tasks.json',
    );
    expect(keycloak.ports).toEqual([{ published: 8443, target: 8443 }]);
  });

  it('gives gateway-oauth an env it starts with: jwt, the realm as issuer, the dev CA trusted', () => {
    expect(startupProblems('gateway', gatewayEnv)).toEqual([]);
    expect(gatewayEnv).toMatchObject({
      MCP_AUTH: 'jwt',
      MCP_JWT_ISSUER: `${keycloakEnv.KC_HOSTNAME}/realms/mcp-tasks`,
      MCP_JWT_AUDIENCE: 'http://localhost:8081/mcp',
      MCP_JWT_REQUIRED_SCOPE: 'mcp:tasks',
      MCP_JWT_TENANT_CLAIM: 'tenant',
    });
    expect(gatewayEnv.MCP_JWT_ISSUER).toMatch(/^https:\/\//);
    expect(mountOf(gateway, 'infra/keycloak/certs/ca.pem')).toBe(gatewayEnv.NODE_EXTRA_CA_CERTS);
    // The audience is the URL clients reach: the published port of this service.
    expect(gateway.ports).toEqual([{ published: 8081, target: 8080 }]);
    expect(gateway.depends_on?.keycloak).toEqual({ condition: 'service_healthy' });
  });
});

describe('infra/keycloak/realm-mcp-tasks.json', () => {
  let realm: Realm;
  beforeAll(async () => {
    realm = JSON.parse(
      await readFile(join(repoRoot, 'infra/keycloak/realm-mcp-tasks.json'), 'utf8'),
    ) as Realm;
  });
  const client = (id: string) => {
    const found = realm.clients.find((c) => c.clientId === id);
    if (found === undefined) throw new Error(`no client ${id}`);
    return found;
  };

  it('is the realm the gateway names as issuer', () => {
    expect(gatewayEnv.MCP_JWT_ISSUER?.endsWith(`/realms/${realm.realm}`)).toBe(true);
  });

  it('defines the required scope, in the token, with an audience mapper naming the resource URL', () => {
    const scope = realm.clientScopes.find((s) => s.name === gatewayEnv.MCP_JWT_REQUIRED_SCOPE);
    expect(scope?.attributes['include.in.token.scope']).toBe('true');
    expect(scope?.protocolMappers).toEqual([
      expect.objectContaining({
        protocolMapper: 'oidc-audience-mapper',
        config: expect.objectContaining({
          'included.custom.audience': gatewayEnv.MCP_JWT_AUDIENCE,
          'access.token.claim': 'true',
        }) as unknown,
      }),
    ]);
  });

  it('has a confidential client for client credentials that always gets the scope', () => {
    const service = client('mcp-tasks-service');
    expect(service).toMatchObject({
      publicClient: false,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      directAccessGrantsEnabled: false,
      defaultClientScopes: ['mcp:tasks'],
    });
    expect(service.secret).toMatch(/^demo-/);
  });

  it('has a public client for the browser login with PKCE S256 and loopback redirects', () => {
    const cli = client('mcp-tasks-cli');
    expect(cli).toMatchObject({
      publicClient: true,
      standardFlowEnabled: true,
      directAccessGrantsEnabled: false,
      redirectUris: ['http://127.0.0.1/*', 'http://localhost/*'],
      optionalClientScopes: ['mcp:tasks', 'offline_access'],
    });
    expect(cli.attributes?.['pkce.code.challenge.method']).toBe('S256');
  });

  it('puts the tenant claim the gateway reads into every access token', () => {
    for (const c of realm.clients) {
      const tenant = c.protocolMappers.find(
        (m) => m.config['claim.name'] === gatewayEnv.MCP_JWT_TENANT_CLAIM,
      );
      expect(tenant?.config, c.clientId).toMatchObject({
        'access.token.claim': 'true',
        'claim.value': 'acme',
      });
    }
  });
});

describe('infra/keycloak/dev-cert.sh', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-tasks-dev-cert-'));
    execFileSync(join(repoRoot, 'infra/keycloak/dev-cert.sh'), [dir], { encoding: 'utf8' });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A Node process connecting to `servername` at 127.0.0.1:port: "ok" or its TLS error code. */
  async function connectAs(port: number, servername: string, ca: string | undefined) {
    const script = `require('node:https').get({ host: '127.0.0.1', port: ${port}, servername: '${servername}', path: '/' }, (r) => { console.log('ok', r.statusCode); r.resume(); }).on('error', (e) => console.log(e.code));`;
    const child = spawn(process.execPath, ['-e', script], {
      env: { PATH: process.env.PATH, ...(ca === undefined ? {} : { NODE_EXTRA_CA_CERTS: ca }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await once(child, 'exit');
    return out.trim();
  }

  it('makes a certificate for keycloak that Node trusts through NODE_EXTRA_CA_CERTS, and only so', async () => {
    const server = createServer(
      {
        cert: await readFile(join(dir, 'keycloak.pem')),
        key: await readFile(join(dir, 'keycloak-key.pem')),
      },
      (_req, res) => res.end('realm'),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      expect(await connectAs(port, 'keycloak', join(dir, 'ca.pem'))).toBe('ok 200');
      expect(await connectAs(port, 'localhost', join(dir, 'ca.pem'))).toBe('ok 200');
      expect(await connectAs(port, 'keycloak', undefined)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      expect(await connectAs(port, 'idp.example.com', join(dir, 'ca.pem'))).toBe(
        'ERR_TLS_CERT_ALTNAME_INVALID',
      );
    } finally {
      server.close();
    }
  });
});
