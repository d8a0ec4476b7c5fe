// hadolint is not in Debian, so this is the Dockerfile's documented check: every path and script
// it names exists, the stages reference each other correctly, the install covers the workspace,
// and the runtime stage is Node 24 slim, non-root, with tini, a HEALTHCHECK and the three roles.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '@mcp-tasks/testing';
import { describe, expect, it } from 'vitest';
import { copyParts, parseDockerfile, stageNames } from '../src/dockerfile.js';
import { repoRoot } from '../src/repo.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const exists = (path: string) => {
  try {
    statSync(join(repoRoot, path));
    return true;
  } catch {
    return false;
  }
};
const instructions = parseDockerfile(read('Dockerfile'));
const stages = stageNames(instructions);

/** Workspace packages by name: their folder and their workspace dependencies. */
function workspaceDirs(): string[] {
  return ['packages', 'tooling', 'apps', 'examples'].flatMap((parent) =>
    readdirSync(join(repoRoot, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && exists(`${parent}/${entry.name}/package.json`))
      .map((entry) => `${parent}/${entry.name}`),
  );
}

function workspace(): Map<string, { dir: string; deps: string[] }> {
  const packages = new Map<string, { dir: string; deps: string[] }>();
  // Every workspace package, so a new dependency of an app cannot be forgotten in the image.
  for (const dir of workspaceDirs()) {
    const pkg = JSON.parse(read(`${dir}/package.json`)) as {
      name: string;
      dependencies?: Record<string, string>;
    };
    const deps = Object.entries(pkg.dependencies ?? {})
      .filter(([, version]) => version.startsWith('workspace:'))
      .map(([name]) => name);
    packages.set(pkg.name, { dir, deps });
  }
  return packages;
}

function closure(names: string[], packages: ReturnType<typeof workspace>): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const dep of packages.get(name)?.deps ?? []) visit(dep);
  };
  names.forEach(visit);
  return seen;
}

describe('Dockerfile', () => {
  it('has the build, prod-deps and runtime stages, in that order', () => {
    expect(stages).toEqual(['build', 'prod-deps', 'runtime']);
  });

  it('copies only paths that exist in the build context and are not in .dockerignore', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#') && !line.startsWith('!'))
      .map((line) => line.replace(/^\*\*\//, ''));
    const sources = instructions
      .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
      .map((i) => copyParts(i.args))
      .filter((c) => c.flags.from === undefined)
      .flatMap((c) => c.sources);
    expect(sources.length).toBeGreaterThan(10);
    for (const source of sources) {
      expect(exists(source), source).toBe(true);
      const parts = source.split('/');
      expect(
        ignored.filter((pattern) => parts.includes(pattern)),
        source,
      ).toEqual([]);
    }
  });

  it('copies from earlier stages only', () => {
    for (const [index, i] of instructions.entries()) {
      const from = i.keyword === 'COPY' ? copyParts(i.args).flags.from : undefined;
      if (from === undefined) continue;
      const stageAt = instructions.slice(0, index).filter((x) => x.keyword === 'FROM').length - 1;
      expect(stages.slice(0, stageAt), `line ${i.line}`).toContain(from);
    }
  });

  it('installs the whole workspace closure of the gateway and the worker, at the pinned pnpm', () => {
    const packages = workspace();
    const needed = closure(['@mcp-tasks/gateway', '@mcp-tasks/worker'], packages);
    const copied = new Set(
      instructions.filter((i) => i.keyword === 'COPY').flatMap((i) => copyParts(i.args).sources),
    );
    for (const name of needed) {
      const dir = packages.get(name)?.dir ?? '';
      expect(copied, `${name} package.json`).toContain(`${dir}/package.json`);
      expect(copied, `${name} sources`).toContain(dir);
    }
    const filters = instructions
      .filter((i) => i.keyword === 'RUN')
      .flatMap((i) => [...i.args.matchAll(/--filter (\S+?)(\.\.\.)?(\s|$)/g)].map((m) => m[1]));
    expect(filters.length).toBeGreaterThan(0);
    for (const name of filters) expect(packages.has(name ?? ''), name).toBe(true);
    const manager = (JSON.parse(read('package.json')) as { packageManager: string }).packageManager;
    expect(read('Dockerfile')).toContain(`npm install -g ${manager}`);
  });

  it('copies the patch of every patched dependency before the first install', () => {
    const patched = (
      JSON.parse(read('package.json')) as {
        pnpm?: { patchedDependencies?: Record<string, string> };
      }
    ).pnpm?.patchedDependencies;
    const patchFiles = Object.values(patched ?? {});
    expect(patchFiles.length).toBeGreaterThan(0);
    const firstInstall = instructions.findIndex(
      (i) => i.keyword === 'RUN' && i.args.includes('pnpm install'),
    );
    const copiedBefore = instructions
      .slice(0, firstInstall)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((i) => copyParts(i.args).sources);
    for (const file of patchFiles) {
      expect(exists(file), file).toBe(true);
      expect(
        copiedBefore.some((source) => file === source || file.startsWith(`${source}/`)),
        `${file} is copied before line ${instructions[firstInstall]?.line}`,
      ).toBe(true);
    }
  });

  it('runs Node 24 slim as a non-root user under tini, with a HEALTHCHECK', () => {
    const runtime = instructions.slice(instructions.findLastIndex((i) => i.keyword === 'FROM'));
    const nodeImage = instructions.find(
      (i) => i.keyword === 'ARG' && i.args.startsWith('NODE_IMAGE='),
    );
    expect(nodeImage?.args).toMatch(/^NODE_IMAGE=node:24-[a-z]+-slim$/);
    // Node 24's young generation held to Node 22's size (docs/adr/0014).
    expect(runtime.filter((i) => i.keyword === 'ENV').map((i) => i.args)).toContain(
      'NODE_OPTIONS=--max-semi-space-size=16',
    );
    const user = runtime.filter((i) => i.keyword === 'USER').map((i) => i.args);
    expect(user).toEqual(['node']);
    expect(
      runtime.some(
        (i) => i.keyword === 'HEALTHCHECK' && i.args.includes('infra/docker/healthcheck.mjs'),
      ),
    ).toBe(true);
    const entrypoint = runtime.find((i) => i.keyword === 'ENTRYPOINT');
    expect(JSON.parse(entrypoint?.args ?? '[]')).toEqual([
      '/usr/bin/tini',
      '--',
      'infra/docker/entrypoint.sh',
    ]);
    expect(runtime.find((i) => i.keyword === 'RUN')?.args).toMatch(
      /apt-get install -y --no-install-recommends tini && rm -rf \/var\/lib\/apt\/lists\/\*/,
    );
  });

  it('names scripts that exist, are executable and parse', () => {
    expect(statSync(join(repoRoot, 'infra/docker/entrypoint.sh')).mode & 0o111).not.toBe(0);
    execFileSync('sh', ['-n', join(repoRoot, 'infra/docker/entrypoint.sh')]);
    execFileSync(process.execPath, ['--check', join(repoRoot, 'infra/docker/healthcheck.mjs')]);
    for (const script of [
      'infra/postgres/primary-init.sh',
      'infra/postgres/replica-entrypoint.sh',
    ]) {
      expect(statSync(join(repoRoot, script)).mode & 0o111, script).not.toBe(0);
      execFileSync('bash', ['-n', join(repoRoot, script)]);
    }
  });

  it('has one role per command, each a built entry point of an existing source file', () => {
    const entrypoint = read('infra/docker/entrypoint.sh');
    const roles = [...entrypoint.matchAll(/^\s*(\w+)\) exec node (\S+)/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(roles.map(([role]) => role)).toEqual(['gateway', 'worker', 'migrate']);
    for (const [, built] of roles) {
      expect(exists((built ?? '').replace('/dist/', '/src/').replace(/\.js$/, '.ts')), built).toBe(
        true,
      );
    }
  });

  it('the entry point refuses an unknown role and runs the migrations for `migrate`', async () => {
    const unknown = spawnSync('sh', ['infra/docker/entrypoint.sh', 'web'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(unknown.status).toBe(64);
    expect(unknown.stderr).toBe('unknown role "web": use gateway, worker or migrate\n');
    const db = await createTestDatabase('dockerfile');
    try {
      const migrate = spawnSync('sh', ['infra/docker/entrypoint.sh', 'migrate'], {
        cwd: repoRoot,
        encoding: 'utf8',
        env: { ...process.env, DATABASE_URL: db.connectionString },
      });
      expect(migrate.stderr).toBe('');
      expect(migrate.stdout).toMatch(/^applied 0001_create_tasks/);
      expect(migrate.status).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
