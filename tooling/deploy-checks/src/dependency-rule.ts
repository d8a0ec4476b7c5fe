// The dependency rule between the repository's wings, as data: which workspace package lives in
// which wing, what each one depends on (package.json) and imports (source), and which of those
// edges break the rule.
//
//   packages/  what ships (protocol, tasks, store, queue, client, tool-sdk, tools, tracing) and
//              `testing`, the test support beside them
//   apps/      the gateway and the worker
//   tooling/   what runs and measures them (loadtest, stack, deploy-checks, fuzz, demo)
//
// Rule: nothing under packages/ or apps/ (source or test, package.json or import) uses a tooling
// package; nothing under packages/ uses an app (`@mcp-tasks/gateway`, `@mcp-tasks/worker`, or a
// relative import into apps/). Tooling may use anything (deploy-checks imports the apps).
// Starting an app as a process (a path string such as `apps/gateway/src/main.ts` handed to
// `startProcess`) is not an import and not an edge here.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';

export type Wing = 'packages' | 'apps' | 'tooling' | 'examples';
export const WINGS: readonly Wing[] = ['packages', 'apps', 'tooling', 'examples'];

export interface WorkspacePackage {
  name: string;
  /** Folder relative to the repository root, e.g. `packages/store`. */
  dir: string;
  wing: Wing;
  /** Every dependency kind: dependencies, devDependencies, peer and optional. */
  dependencies: string[];
}

/** Why `from` may not use `to`, or undefined when the edge is allowed. */
export function forbidden(from: Wing, to: Wing): string | undefined {
  if ((from === 'packages' || from === 'apps') && to === 'tooling') {
    return `${from}/ may not use tooling/`;
  }
  if (from === 'packages' && to === 'apps') return 'packages/ may not use apps/';
  return undefined;
}

export function workspacePackages(root: string): WorkspacePackage[] {
  return WINGS.flatMap((wing) =>
    readdirSync(join(root, wing), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${wing}/${entry.name}`)
      .filter((dir) => isFile(join(root, dir, 'package.json')))
      .map((dir) => {
        const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
          name: string;
          dependencies?: Record<string, string>;
          devDependencies?: Record<string, string>;
          peerDependencies?: Record<string, string>;
          optionalDependencies?: Record<string, string>;
        };
        const dependencies = [
          pkg.dependencies,
          pkg.devDependencies,
          pkg.peerDependencies,
          pkg.optionalDependencies,
        ].flatMap((deps) => Object.keys(deps ?? {}));
        return { name: pkg.name, dir, wing, dependencies };
      }),
  );
}

/** `dir/package.json: depends on NAME (tooling/x): rule` for every forbidden package.json edge. */
export function dependencyViolations(packages: WorkspacePackage[]): string[] {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  return packages.flatMap((pkg) =>
    pkg.dependencies.flatMap((name) => {
      const target = byName.get(name);
      const why = target && forbidden(pkg.wing, target.wing);
      return why ? [`${pkg.dir}/package.json: depends on ${name} (${target.dir}): ${why}`] : [];
    }),
  );
}

/** The module specifiers of a source file: static and dynamic imports, re-exports, require. */
export function importSpecifiers(text: string): { specifier: string; index: number }[] {
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*[,)]/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  return patterns
    .flatMap((pattern) =>
      [...text.matchAll(pattern)].map((m) => ({ specifier: m[1] ?? '', index: m.index })),
    )
    .sort((a, b) => a.index - b.index);
}

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', 'results', '.turbo']);

/** Every source file (code and tests) of the packages in `wings`, relative to `root`. */
export function sourceFilesOf(root: string, packages: WorkspacePackage[], wings: Wing[]) {
  const files: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(join(root, path), { withFileTypes: true })) {
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(child);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(child);
    }
  };
  for (const pkg of packages) if (wings.includes(pkg.wing)) walk(pkg.dir);
  return files.sort();
}

/**
 * `file:line: imports SPEC (tooling/x): rule` for every forbidden import in `files` (paths
 * relative to the root, each read through `read`).
 */
export function importViolations(
  packages: WorkspacePackage[],
  files: string[],
  read: (file: string) => string,
): string[] {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const wingOf = (path: string) => WINGS.find((wing) => path.startsWith(`${wing}/`));
  return files.flatMap((file) => {
    const from = wingOf(file);
    if (from === undefined) return [];
    const text = read(file);
    return importSpecifiers(text).flatMap(({ specifier, index }) => {
      let to: Wing | undefined;
      let target: string;
      if (specifier.startsWith('.')) {
        target = normalize(join(dirname(file), specifier))
          .split(sep)
          .join('/');
        to = wingOf(target);
      } else {
        const name = specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/');
        const pkg = byName.get(name);
        target = pkg?.dir ?? name;
        to = pkg?.wing;
      }
      const why = to && forbidden(from, to);
      if (!why) return [];
      const line = text.slice(0, index).split('\n').length;
      return [`${file}:${line}: imports ${specifier} (${target}): ${why}`];
    });
  });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
