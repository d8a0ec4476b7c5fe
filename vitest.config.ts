import { defineConfig } from 'vitest/config';

// The root run is the README's test command: every package and app as one vitest project each.
// The JSON report lets CI print a plain "N passed, N failed" line after the run.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'examples/*'],
    reporters: ['default', 'json'],
    outputFile: { json: 'results/vitest.json' },
  },
});
