// Writes scripts/ci/test-durations.json (seconds per test file, slowest first) from a whole run's
// vitest JSON report (results/vitest.json, or the file named first): the order the longest-first
// sequencer (vitest.sequencer.ts) starts files in. Refresh it after a full `pnpm test` when the
// slowest files change.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const reportPath = process.argv[2] ?? 'results/vitest.json';
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
// The report sits in <checkout>/results/: paths are kept relative to that checkout.
const checkout = dirname(dirname(resolve(reportPath)));
const seconds = report.testResults
  .map((file) => [relative(checkout, file.name), (file.endTime - file.startTime) / 1000])
  .sort((a, b) => b[1] - a[1])
  .map(([path, s]) => [path, Math.round(s * 10) / 10]);
writeFileSync(
  join(dirname(fileURLToPath(import.meta.url)), 'test-durations.json'),
  `${JSON.stringify(Object.fromEntries(seconds), null, 2)}\n`,
);
console.log(`test-durations.json: ${seconds.length} files, slowest ${seconds[0]?.[0]}`);
