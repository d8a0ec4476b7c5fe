// `pnpm build` (scripts/build.mjs) builds every package in one `tsc -b`, in the order it prints
// with --print-order: each package's build reads its workspace dependencies' emitted
// declarations, so every one of them must come first.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workspacePackages } from '../src/dependency-rule.js';
import { repoRoot } from '../src/repo.js';

const printed = execFileSync(
  process.execPath,
  [join(repoRoot, 'scripts/build.mjs'), '--print-order'],
  { cwd: repoRoot, encoding: 'utf8' },
)
  .trim()
  .split('\n');
const order = printed.map((project) => project.replace(/\/tsconfig\.build\.json$/, ''));
const built = workspacePackages(repoRoot).filter((pkg) =>
  existsSync(join(repoRoot, pkg.dir, 'tsconfig.build.json')),
);

describe('the build order of pnpm build', () => {
  it('names every package with a tsconfig.build.json once', () => {
    expect(printed.every((project) => project.endsWith('/tsconfig.build.json'))).toBe(true);
    expect([...order].sort()).toEqual(built.map((pkg) => pkg.dir).sort());
  });

  it('puts each package after every workspace package it depends on', () => {
    const dirOf = new Map(built.map((pkg) => [pkg.name, pkg.dir]));
    const late = built.flatMap((pkg) =>
      pkg.dependencies
        .filter((name) => dirOf.has(name))
        .filter((name) => order.indexOf(dirOf.get(name)!) > order.indexOf(pkg.dir))
        .map((name) => `${pkg.dir} is built before its dependency ${name}`),
    );
    expect(late).toEqual([]);
    // The order has work to do: some package depends on another built one.
    expect(built.some((pkg) => pkg.dependencies.some((name) => dirOf.has(name)))).toBe(true);
  });
});
