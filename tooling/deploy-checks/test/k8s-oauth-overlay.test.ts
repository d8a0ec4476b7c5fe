// k8s/overlays/oauth: prod with the gateway as an OAuth resource server. The schema, unknown-key
// and env checks of every overlay (k8s-manifests, env-drift) cover it too; this file checks what
// only it promises.
import { describe, expect, it } from 'vitest';
import { startupProblems } from '../src/app-env.js';
import { readManifestFile, renderOverlay, type Manifest } from '../src/manifests.js';

const oauth = renderOverlay('oauth');
const prod = renderOverlay('prod');

function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found;
}

const config = (find(oauth, 'ConfigMap', 'mcp-tasks-gateway-config') as { data?: object })
  .data as Record<string, string>;
const ingress = find(oauth, 'Ingress', 'mcp-tasks-gateway') as unknown as {
  spec: { rules: { host: string; http: { paths: { path: string; pathType: string }[] } }[] };
};
const gatewayContainer = (
  find(oauth, 'Deployment', 'mcp-tasks-gateway') as unknown as {
    spec: {
      template: {
        spec: {
          containers: {
            env: {
              name: string;
              valueFrom?: { secretKeyRef?: { key: string; optional?: boolean } };
            }[];
          }[];
        };
      };
    };
  }
).spec.template.spec.containers[0];

describe('k8s/overlays/oauth', () => {
  it('sets the OAuth settings in the gateway ConfigMap, the audience being the Ingress URL of /mcp', () => {
    const host = ingress.spec.rules[0]?.host;
    expect(config).toMatchObject({
      MCP_AUTH: 'jwt',
      MCP_JWT_AUDIENCE: `https://${host}/mcp`,
      MCP_JWT_REQUIRED_SCOPE: 'mcp:tasks',
      MCP_JWT_TENANT_CLAIM: 'tenant',
    });
    expect(config.MCP_JWT_ISSUER).toMatch(/^https:\/\//);
    // The metadata's well-known paths reach the gateways through the same Ingress rule.
    expect(ingress.spec.rules[0]?.http.paths).toEqual([
      expect.objectContaining({ path: '/', pathType: 'Prefix' }),
    ]);
  });

  it('starts the gateway from a Secret without MCP_TOKENS', () => {
    const [template] = readManifestFile('k8s/base/secret.template.yaml');
    const { MCP_TOKENS: _unused, ...secret } = (template?.stringData ?? {}) as Record<
      string,
      string
    >;
    const env: Record<string, string> = { ...config };
    for (const entry of gatewayContainer?.env ?? []) {
      const ref = entry.valueFrom?.secretKeyRef;
      if (ref === undefined) continue;
      const value = secret[ref.key];
      if (value !== undefined) env[entry.name] = value;
      else expect(ref.optional, `${entry.name} is optional`).toBe(true);
    }
    expect(env.MCP_TOKENS).toBeUndefined();
    expect(startupProblems('gateway', env)).toEqual([]);
  });

  it('changes nothing of prod but the gateway ConfigMap and the optional MCP_TOKENS', () => {
    const key = (m: Manifest) => `${m.kind}/${m.metadata.name}`;
    expect(oauth.map(key)).toEqual(prod.map(key));
    const differing = oauth
      .filter((m, i) => JSON.stringify(m) !== JSON.stringify(prod[i]))
      .map(key);
    expect(differing).toEqual([
      'ConfigMap/mcp-tasks-gateway-config',
      'Deployment/mcp-tasks-gateway',
    ]);
  });
});
