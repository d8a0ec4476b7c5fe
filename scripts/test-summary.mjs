// Prints vitest's JSON report (results/vitest.json) as one plain closing line for CI logs.
import { readFileSync } from 'node:fs';

const label = process.argv[2] ?? 'tests';
const report = JSON.parse(readFileSync('results/vitest.json', 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
console.log(
  `${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`,
);
