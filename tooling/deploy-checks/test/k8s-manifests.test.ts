import { describe, expect, it } from 'vitest';
import { OVERLAYS, readManifestFile, renderOverlay, type Manifest } from '../src/manifests.js';
import { schemaProblems, unknownKeyProblems } from '../src/k8s-schema.js';

const rendered = Object.fromEntries(OVERLAYS.map((o) => [o, renderOverlay(o)])) as Record<
  (typeof OVERLAYS)[number],
  Manifest[]
>;

function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found;
}

describe.each(OVERLAYS)('k8s/overlays/%s', (overlay) => {
  const manifests = rendered[overlay];

  it('renders with kustomize and every object passes the kubernetes-models / KEDA schema', () => {
    expect(manifests.length).toBeGreaterThan(10);
    expect(manifests.flatMap(schemaProblems)).toEqual([]);
  });

  it('has no unknown or misspelled key anywhere', () => {
    expect(unknownKeyProblems(manifests)).toEqual([]);
  });

  it('contains everything the deployment needs', () => {
    const kinds = new Set(manifests.map((m) => `${m.kind}/${m.metadata.name}`));
    for (const expected of [
      'Deployment/mcp-tasks-gateway',
      'Deployment/mcp-tasks-worker',
      'Service/mcp-tasks-gateway',
      'HorizontalPodAutoscaler/mcp-tasks-gateway',
      'ScaledObject/mcp-tasks-worker',
      'TriggerAuthentication/mcp-tasks-postgres',
      'PodDisruptionBudget/mcp-tasks-gateway',
      'PodDisruptionBudget/mcp-tasks-worker',
      'Job/mcp-tasks-migrate',
      'ConfigMap/mcp-tasks-gateway-config',
      'ConfigMap/mcp-tasks-worker-config',
      'NetworkPolicy/mcp-tasks-postgres',
      'NetworkPolicy/mcp-tasks-redis',
      'Ingress/mcp-tasks-gateway',
    ]) {
      expect(kinds).toContain(expected);
    }
    const namespace = overlay === 'dev' ? 'mcp-tasks-dev' : 'mcp-tasks';
    for (const m of manifests.filter((m) => m.kind !== 'Namespace')) {
      expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBe(namespace);
    }
  });

  it('runs datastores in-cluster only in dev, and ships a Secret only in dev (demo values)', () => {
    const statefulSets = manifests
      .filter((m) => m.kind === 'StatefulSet')
      .map((m) => m.metadata.name);
    const secrets = manifests.filter((m) => m.kind === 'Secret').map((m) => m.metadata.name);
    if (overlay === 'dev') {
      expect(statefulSets.sort()).toEqual(['mcp-tasks-postgres', 'mcp-tasks-redis']);
      expect(secrets).toEqual(['mcp-tasks-secrets']);
    } else {
      expect(statefulSets).toEqual([]);
      expect(secrets).toEqual([]);
    }
  });

  it('scales workers with KEDA on the Postgres count and gateways on CPU', () => {
    const scaled = find(manifests, 'ScaledObject', 'mcp-tasks-worker') as {
      spec: {
        scaleTargetRef: { name: string };
        triggers: { type: string; metadata: Record<string, string> }[];
      };
    } & Manifest;
    expect(scaled.spec.scaleTargetRef.name).toBe('mcp-tasks-worker');
    expect(scaled.spec.triggers.map((t) => t.type)).toEqual(['postgresql']);
    const workerConfig = find(manifests, 'ConfigMap', 'mcp-tasks-worker-config') as Manifest & {
      data: Record<string, string>;
    };
    expect(scaled.spec.triggers[0]?.metadata.targetQueryValue).toBe(
      workerConfig.data.WORKER_CONCURRENCY,
    );
    const hpa = find(manifests, 'HorizontalPodAutoscaler', 'mcp-tasks-gateway') as Manifest & {
      spec: { metrics: { resource: { name: string } }[] };
    };
    expect(hpa.spec.metrics.map((m) => m.resource.name)).toEqual(['cpu']);
  });
});

describe('the schema check itself', () => {
  const gateway = find(rendered.prod, 'Deployment', 'mcp-tasks-gateway') as Manifest & {
    spec: Record<string, unknown>;
  };

  it('rejects a misspelled key (`replica: 3`)', () => {
    const { replicas, ...rest } = gateway.spec;
    const misspelled = { ...gateway, spec: { ...rest, replica: replicas } };
    const problems = unknownKeyProblems([misspelled]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/Deployment\/mcp-tasks-gateway: .*'"replica"' does not exist/);
  });

  it('rejects an unknown key deep inside a KEDA trigger and a wrong type', () => {
    const scaled = find(rendered.prod, 'ScaledObject', 'mcp-tasks-worker') as Manifest & {
      spec: { triggers: Record<string, unknown>[] };
    };
    const bad = {
      ...scaled,
      spec: { ...scaled.spec, triggers: [{ ...scaled.spec.triggers[0], authRef: 'x' }] },
    };
    expect(unknownKeyProblems([bad]).join('\n')).toMatch(/'"authRef"' does not exist/);
    expect(schemaProblems({ ...gateway, spec: { ...gateway.spec, replicas: 'three' } })).toEqual([
      expect.stringMatching(/replicas must be integer/),
    ]);
  });

  it('validates the Secret template too (not part of any overlay)', () => {
    const template = readManifestFile('k8s/base/secret.template.yaml');
    expect(template.map((m) => m.kind)).toEqual(['Secret']);
    expect([...template.flatMap(schemaProblems), ...unknownKeyProblems(template)]).toEqual([]);
  });
});
