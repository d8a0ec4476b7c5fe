// The wings' dependency rule (ARCHITECTURE.md, "Wings"): nothing under packages/ or apps/ —
// source or tests — depends on or imports a tooling/ package, and nothing under packages/ uses an
// app. Tooling may use anything: deploy-checks imports the apps, the loadtest the packages.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dependencyViolations,
  importSpecifiers,
  importViolations,
  sourceFilesOf,
  workspacePackages,
  type WorkspacePackage,
} from '../src/dependency-rule.js';
import { repoRoot } from '../src/repo.js';

const packages = workspacePackages(repoRoot);

describe('the dependency rule between the wings', () => {
  it('finds the workspace in its four wings', () => {
    const dirs = packages.map((pkg) => pkg.dir);
    expect(dirs).toEqual(
      expect.arrayContaining([
        'packages/store',
        'packages/testing',
        'apps/gateway',
        'apps/worker',
        'tooling/loadtest',
        'tooling/stack',
        'tooling/deploy-checks',
        'tooling/fuzz',
        'tooling/demo',
      ]),
    );
  });

  it('no package.json under packages/ or apps/ depends on tooling, none under packages/ on an app', () => {
    expect(dependencyViolations(packages)).toEqual([]);
  });

  it('no file under packages/ or apps/ (code or test) imports tooling, none under packages/ an app', () => {
    const files = sourceFilesOf(repoRoot, packages, ['packages', 'apps']);
    // The walk reaches the tests too, not only src/.
    expect(files).toContain('packages/testing/src/index.ts');
    expect(files.some((file) => file.startsWith('apps/gateway/test/'))).toBe(true);
    expect(
      importViolations(packages, files, (f) => readFileSync(join(repoRoot, f), 'utf8')),
    ).toEqual([]);
  });

  // The checks above must be able to fail: the same functions on edges that break the rule.
  describe('catches a violation', () => {
    const fake: WorkspacePackage[] = [
      { name: '@x/lib', dir: 'packages/lib', wing: 'packages', dependencies: ['@x/stack'] },
      { name: '@x/app', dir: 'apps/app', wing: 'apps', dependencies: ['@x/lib'] },
      { name: '@x/stack', dir: 'tooling/stack', wing: 'tooling', dependencies: ['@x/app'] },
      { name: '@x/tool', dir: 'packages/tool', wing: 'packages', dependencies: ['@x/app'] },
    ];

    it('in a package.json', () => {
      expect(dependencyViolations(fake)).toEqual([
        'packages/lib/package.json: depends on @x/stack (tooling/stack): packages/ may not use tooling/',
        'packages/tool/package.json: depends on @x/app (apps/app): packages/ may not use apps/',
      ]);
    });

    it('in an import, by name or by relative path', () => {
      const sources: Record<string, string> = {
        'packages/lib/test/a.test.ts': "import { startStack } from '@x/stack';\n",
        'apps/app/src/b.ts': "const m = await import('../../../tooling/stack/src/stack.js');\n",
        'packages/lib/src/c.ts': "\nexport { x } from '../../../apps/app/src/x.js';\n",
        'packages/lib/src/d.ts': "import type {\n  App,\n} from '@x/app/sub';\n",
        'tooling/stack/src/e.ts':
          "import { app } from '@x/app';\nimport '../../../apps/app/src/main.js';\n",
        'apps/app/src/f.ts':
          "import { lib } from '@x/lib';\nconst entry = 'apps/app/src/main.ts';\n",
      };
      expect(importViolations(fake, Object.keys(sources), (f) => sources[f] ?? '')).toEqual([
        'packages/lib/test/a.test.ts:1: imports @x/stack (tooling/stack): packages/ may not use tooling/',
        'apps/app/src/b.ts:1: imports ../../../tooling/stack/src/stack.js (tooling/stack/src/stack.js): apps/ may not use tooling/',
        'packages/lib/src/c.ts:2: imports ../../../apps/app/src/x.js (apps/app/src/x.js): packages/ may not use apps/',
        'packages/lib/src/d.ts:1: imports @x/app/sub (apps/app): packages/ may not use apps/',
      ]);
    });

    it('reads every kind of import', () => {
      const text = [
        "import a from 'a';",
        "import { b } from 'b';",
        "import type { C } from 'c';",
        "export * from 'd';",
        "import 'e';",
        "await import('f');",
        "require('g');",
      ].join('\n');
      expect(importSpecifiers(text).map((s) => s.specifier)).toEqual([
        'a',
        'b',
        'c',
        'd',
        'e',
        'f',
        'g',
      ]);
    });
  });
});
