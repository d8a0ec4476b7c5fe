import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ACCEPTED_NAMES, startupProblems, type AppRole } from '../src/app-env.js';
import { OVERLAYS, readManifestFile, renderOverlay, type Manifest } from '../src/manifests.js';
import { repoRoot } from '../src/repo.js';

interface Container {
  name: string;
  args?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string; optional?: boolean };
      configMapKeyRef?: { name: string; key: string };
      fieldRef?: { fieldPath: string };
    };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
}

/** name → data of every ConfigMap and Secret the overlay has (prod, oauth: the Secret template). */
function dataSources(overlay: (typeof OVERLAYS)[number], manifests: Manifest[]) {
  const sources = new Map<string, Record<string, string>>();
  const secrets = overlay === 'dev' ? [] : readManifestFile('k8s/base/secret.template.yaml');
  for (const m of [...manifests, ...secrets]) {
    if (m.kind === 'ConfigMap')
      sources.set(`ConfigMap/${m.metadata.name}`, m.data as Record<string, string>);
    if (m.kind === 'Secret') {
      const data = Object.fromEntries(
        Object.entries((m.data ?? {}) as Record<string, string>).map(([k, v]) => [
          k,
          Buffer.from(v, 'base64').toString('utf8'),
        ]),
      );
      sources.set(`Secret/${m.metadata.name}`, {
        ...data,
        ...((m.stringData ?? {}) as Record<string, string>),
      });
    }
  }
  return sources;
}

/** The environment a container starts with, every reference resolved. */
function containerEnv(container: Container, sources: Map<string, Record<string, string>>) {
  const lookup = (kind: string, name: string): Record<string, string> => {
    const data = sources.get(`${kind}/${name}`);
    if (data === undefined) throw new Error(`${container.name} references missing ${kind}/${name}`);
    return data;
  };
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, lookup('ConfigMap', from.configMapRef.name));
    if (from.secretRef) Object.assign(env, lookup('Secret', from.secretRef.name));
  }
  for (const entry of container.env ?? []) {
    const ref = entry.valueFrom;
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (ref?.fieldRef) env[entry.name] = 'mcp-tasks-worker-5d8f7-abcde';
    else if (ref?.secretKeyRef || ref?.configMapKeyRef) {
      const key = (ref.secretKeyRef ?? ref.configMapKeyRef) as {
        name: string;
        key: string;
        optional?: boolean;
      };
      const value = lookup(ref.secretKeyRef ? 'Secret' : 'ConfigMap', key.name)[key.key];
      if (value !== undefined) env[entry.name] = value;
      else if (!ref.secretKeyRef?.optional)
        throw new Error(`${container.name}: ${key.name} has no key ${key.key}`);
    }
  }
  return env;
}

function roleOf(args: string[] | undefined): AppRole {
  const role = args?.[0];
  if (role === 'gateway' || role === 'worker' || role === 'migrate') return role;
  throw new Error(`unexpected container args ${JSON.stringify(args)}`);
}

describe.each(OVERLAYS)('k8s/overlays/%s: every app container starts with its env', (overlay) => {
  const manifests = renderOverlay(overlay);
  const sources = dataSources(overlay, manifests);
  const workloads = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Job');

  it.each(workloads.map((w) => [`${w.kind}/${w.metadata.name}`, w] as const))(
    '%s',
    (_, workload) => {
      const containers = (
        workload as unknown as { spec: { template: { spec: { containers: Container[] } } } }
      ).spec.template.spec.containers;
      for (const container of containers) {
        const role = roleOf(container.args);
        expect(startupProblems(role, containerEnv(container, sources))).toEqual([]);
      }
    },
  );
});

describe('docker-compose.yml: every app service starts with its env', () => {
  const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as {
    services: Record<
      string,
      { image?: string; command?: string[]; environment?: Record<string, string> }
    >;
  };
  // The services built from this repository's Dockerfile (the x-app anchor).
  const apps = Object.entries(compose.services).filter(([, s]) => s.image === 'mcp-tasks:local');

  it('has the three app services and the oauth profile gateway, each with its role as the command', () => {
    expect(Object.fromEntries(apps.map(([name, s]) => [name, s.command]))).toEqual({
      migrate: ['migrate'],
      gateway: ['gateway'],
      'gateway-oauth': ['gateway'],
      worker: ['worker'],
    });
  });

  it.each(apps)('%s', (_, service) => {
    const role = roleOf(service.command);
    expect(startupProblems(role, service.environment ?? {})).toEqual([]);
  });
});

describe('docker-compose.pooler.yml: the apps start behind the pooler', () => {
  const read = (file: string) =>
    parse(readFileSync(join(repoRoot, file), 'utf8'), { merge: true }) as {
      services: Record<string, { command?: string[]; environment?: Record<string, string> }>;
    };
  const main = read('docker-compose.yml');
  const pooler = read('docker-compose.pooler.yml');

  it.each(['gateway', 'worker'])('%s', (name) => {
    const env = {
      ...main.services[name]?.environment,
      ...pooler.services[name]?.environment,
    };
    expect(env.DATABASE_POOLER).toBe('transaction');
    expect(startupProblems(roleOf(main.services[name]?.command), env)).toEqual([]);
  });
});

describe('the drift check itself', () => {
  it('derives the accepted names from the parsers', () => {
    expect(ACCEPTED_NAMES.gateway).toContain('MCP_SHUTDOWN_DELAY_MS');
    expect(ACCEPTED_NAMES.worker).toContain('METRICS_PORT');
    expect(ACCEPTED_NAMES.worker).not.toContain('MCP_TOKENS');
  });

  it('reports a misspelled name, a name for the other app and a missing required variable', () => {
    const base = { DATABASE_URL: 'postgres://h/db', REDIS_URL: 'redis://h:6379' };
    expect(startupProblems('worker', { ...base, WORKER_CONCURENCY: '4', MCP_TOKENS: 'x' })).toEqual(
      [
        'WORKER_CONCURENCY: not a variable the worker reads',
        'MCP_TOKENS: not a variable the worker reads',
      ],
    );
    expect(startupProblems('gateway', base)).toEqual([
      'MCP_AUTH: is required: one of tokens, jwt, none (none must be chosen explicitly)',
    ]);
  });
});
