import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './repo.js';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export const OVERLAYS = ['dev', 'prod', 'oauth', 'pooler'] as const;
export type Overlay = (typeof OVERLAYS)[number];

/**
 * KUBECTL if set; else the one scripts/ci/deploy-checks.sh installed into .tools when the machine
 * had none with kustomize v4+; else kubectl on PATH.
 */
export const kubectl =
  process.env.KUBECTL ??
  (existsSync(join(repoRoot, '.tools/kubectl/kubectl'))
    ? join(repoRoot, '.tools/kubectl/kubectl')
    : 'kubectl');

export function parseManifests(text: string, source: string): Manifest[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as Manifest | null;
    return value === null ? [] : [unfoldSecretData(value)];
  });
}

/**
 * kustomize folds long base64 values over several lines; the API server's decoder (Go's
 * encoding/base64) skips the newlines, so the schema's `byte` format must see them joined.
 */
function unfoldSecretData(manifest: Manifest): Manifest {
  const data = manifest.data;
  if (manifest.kind !== 'Secret' || typeof data !== 'object' || data === null) return manifest;
  const joined = Object.fromEntries(
    Object.entries(data as Record<string, string>).map(([key, value]) => [
      key,
      value.replace(/[\r\n]/g, ''),
    ]),
  );
  return { ...manifest, data: joined };
}

/** `kubectl kustomize k8s/overlays/<name>`, parsed. */
export function renderOverlay(overlay: Overlay): Manifest[] {
  const dir = join(repoRoot, 'k8s', 'overlays', overlay);
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  return parseManifests(text, `k8s/overlays/${overlay}`);
}

export function readManifestFile(relativePath: string): Manifest[] {
  return parseManifests(readFileSync(join(repoRoot, relativePath), 'utf8'), relativePath);
}
