import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './vitest.sequencer.js';

// The root run is the README's test command: every package and app as one vitest project each.
// Each project sets `isolate: false`: a worker keeps the modules it loaded for the project's next
// file instead of importing the app afresh per file (the gateway project alone: 154 → 77 CPU-s);
// every file still has its own database, Redis prefix, ports and processes, and restores what it
// changes. The sequencer runs a project's files back to back so workers can be handed on.
// The JSON report lets CI print a plain "N passed, N failed" line after the run.
export default defineConfig({
  test: {
    projects: ['packages/*', 'tooling/*', 'apps/*', 'examples/*'],
    // Three files at once: every file has its own database, Redis prefix, ports and temp dirs,
    // and most of a file's time is spent waiting on the processes it starts. More would press on
    // the shared Postgres's 100 connections.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default', 'json'],
    outputFile: { json: 'results/vitest.json' },
  },
});
