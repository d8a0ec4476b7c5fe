import { spawn } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** The workspace packages the stack runs from `dist/`, by folder and package name. */
export const RUNTIME_PACKAGES = [
  ['packages/tasks', '@mcp-tasks/tasks'],
  ['packages/protocol', '@mcp-tasks/protocol'],
  ['packages/tracing', '@mcp-tasks/tracing'],
  ['packages/store', '@mcp-tasks/store'],
  ['packages/queue', '@mcp-tasks/queue'],
  ['packages/tools', '@mcp-tasks/tools'],
  ['apps/gateway', '@mcp-tasks/gateway'],
  ['apps/worker', '@mcp-tasks/worker'],
  // Loaded through MCP_TOOL_MODULES by the load test's stack (transfer_funds, the effects check).
  ['examples/ledger', '@mcp-tasks/example-ledger'],
] as const;

async function filesUnder(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

async function mtimes(paths: string[]): Promise<number[]> {
  const stats = await Promise.all(paths.map((path) => stat(path).catch(() => undefined)));
  return stats.filter((s) => s !== undefined).map((s) => s.mtimeMs);
}

/**
 * A package is stale when a source (a non-test `.ts` under src) has no emitted `.js` in dist newer
 * than it, or its tsconfig or package.json is newer than the oldest of those: tsc rewrites every
 * output. Outputs left behind by a deleted or renamed source do not count.
 */
export async function isStale(packageDir: string): Promise<boolean> {
  const excluded = await excludedFolders(packageDir);
  const sources = (
    await filesUnder(
      join(packageDir, 'src'),
      (n) => n.endsWith('.ts') && !n.endsWith('.d.ts') && !n.includes('.test.'),
    )
  ).filter((source) => !excluded.some((folder) => source.startsWith(folder)));
  if (sources.length === 0) return true;
  const outputs = sources.map((source) =>
    join(packageDir, 'dist', relative(join(packageDir, 'src'), source).replace(/\.ts$/, '.js')),
  );
  const [sourceTimes, outputTimes] = await Promise.all([
    mtimesOrNaN(sources),
    mtimesOrNaN(outputs),
  ]);
  if (outputTimes.some((t, i) => !(t >= sourceTimes[i]!))) return true;
  const configs = await mtimes([
    join(packageDir, 'package.json'),
    join(packageDir, 'tsconfig.build.json'),
  ]);
  return Math.max(...configs) > Math.min(...outputTimes);
}

/** The plain folders (no wildcard) tsconfig.build.json excludes from the build, e.g. src/testing. */
async function excludedFolders(packageDir: string): Promise<string[]> {
  const config = await readFile(join(packageDir, 'tsconfig.build.json'), 'utf8').catch(() => '{}');
  const exclude = (JSON.parse(config) as { exclude?: string[] }).exclude ?? [];
  return exclude
    .filter((entry) => !entry.includes('*'))
    .map((entry) => join(packageDir, entry, sep));
}

async function mtimesOrNaN(paths: string[]): Promise<number[]> {
  const stats = await Promise.all(paths.map((path) => stat(path).catch(() => undefined)));
  return stats.map((s) => s?.mtimeMs ?? Number.NaN);
}

/** Builds only the stale runtime packages (pnpm sorts them topologically); returns their names. */
export async function buildStalePackages(
  repoRoot: string,
  log: (line: string) => void,
): Promise<string[]> {
  const stale: string[] = [];
  for (const [dir, name] of RUNTIME_PACKAGES) {
    if (await isStale(join(repoRoot, dir))) stale.push(name);
  }
  if (stale.length === 0) return stale;
  log(`building ${stale.join(', ')}`);
  const args = [...stale.flatMap((name) => ['--filter', name]), 'build'];
  const child = spawn('pnpm', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`pnpm ${args.join(' ')} failed:\n${output}`);
  return stale;
}
