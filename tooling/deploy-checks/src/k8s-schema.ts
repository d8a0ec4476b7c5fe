import { createRequire } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import type { Manifest } from './manifests.js';

const require = createRequire(import.meta.url);
const here = join(import.meta.dirname, '..');

/** The kubernetes-models module of a kind: core, apps, … or KEDA's CRDs. */
export function modelModule(manifest: Pick<Manifest, 'apiVersion' | 'kind'>): string {
  const pkg = manifest.apiVersion.startsWith('keda.sh/')
    ? '@kubernetes-models/keda'
    : 'kubernetes-models';
  return `${pkg}/${manifest.apiVersion}/${manifest.kind}`;
}

interface ModelClass {
  new (data: unknown): { validate(): void };
}

/**
 * The models' own runtime validation (JSON schema: types, required fields, formats, enums).
 * It allows unknown keys, which `unknownKeyProblems` covers.
 */
export function schemaProblems(manifest: Manifest): string[] {
  let Model: ModelClass;
  try {
    const mod = require(modelModule(manifest)) as Record<string, ModelClass>;
    const found = mod[manifest.kind];
    if (found === undefined) throw new Error('no model class');
    Model = found;
  } catch {
    return [`${manifest.apiVersion} ${manifest.kind}: no schema in kubernetes-models`];
  }
  try {
    new Model(manifest).validate();
    return [];
  } catch (error) {
    return [`${manifest.kind}/${manifest.metadata.name}: ${(error as Error).message}`];
  }
}

/**
 * Unknown or misspelled keys (`replica: 3`), at any depth: each manifest becomes an object literal
 * typed with the kind's interface from the same kubernetes-models package, and TypeScript's
 * excess-property check reports every key the interface does not declare.
 */
export function unknownKeyProblems(manifests: Manifest[]): string[] {
  const fileName = join(here, '__manifests__.ts');
  const lines: string[] = [];
  manifests.forEach((manifest, index) => {
    lines.push(
      `import type { I${manifest.kind} as T${index} } from '${modelModule(manifest)}';`,
      `export const m${index}: T${index} = ${JSON.stringify(manifest, null, 1)};`,
    );
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, source, languageVersion, true)
      : getSourceFile(name, languageVersion, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === fileName)
    .map((d) => {
      const at = d.file?.getLineAndCharacterOfPosition(d.start ?? 0);
      const line = at === undefined ? '' : (source.split('\n')[at.line] ?? '').trim();
      const owner = ownerOf(source, at?.line ?? 0, manifests);
      return `${owner}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')} (at ${line})`;
    });
}

function ownerOf(source: string, line: number, manifests: Manifest[]): string {
  const before = source.split('\n').slice(0, line + 1);
  for (let i = before.length - 1; i >= 0; i--) {
    const match = /^export const m(\d+):/.exec(before[i] ?? '');
    if (match) {
      const manifest = manifests[Number(match[1])];
      return manifest ? `${manifest.kind}/${manifest.metadata.name}` : 'manifest';
    }
  }
  return 'manifest';
}
