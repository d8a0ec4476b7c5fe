import { defineConfig } from 'vitest/config';

// The root run is the README's test command: every package and app as one vitest project each.
// The JSON report lets CI print a plain "N passed, N failed" line after the run.
export default defineConfig({
  test: {
    projects: ['packages/*', 'tooling/*', 'apps/*', 'examples/*'],
    // Files may run side by side: every file has its own database, Redis prefix, ports and temp
    // dirs, and most of a file's time is spent waiting on the processes it starts (issue 31:
    // the whole suite took 428 s with 3 at once, against 879 s one at a time). Held at 1 for
    // now: the first CI run with 3 caught a task left `working` under kill-redis-master
    // (issue 26), a real fault that the extra load brings out; raise this once it is fixed.
    // `pnpm test --maxWorkers 3` runs the fast way.
    maxWorkers: 1,
    reporters: ['default', 'json'],
    outputFile: { json: 'results/vitest.json' },
  },
});
