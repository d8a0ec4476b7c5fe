import { defineConfig } from 'vitest/config';

// The root run is the README's test command: every package and app as one vitest project each.
// The JSON report lets CI print a plain "N passed, N failed" line after the run.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'examples/*'],
    // Three files at once even on 2 cores (vitest's default there is 1): most of a file's time is
    // spent waiting on the processes it starts (gateways, workers, private Postgres and Redis),
    // and every file has its own database, Redis prefix, ports and temp dirs (issue 31).
    maxWorkers: 3,
    reporters: ['default', 'json'],
    outputFile: { json: 'results/vitest.json' },
  },
});
