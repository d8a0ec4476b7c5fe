// Prints vitest's JSON report (results/vitest.json, or the file named third) for CI logs: one plain closing line, then the
// slowest test files and the time per project, so the suite's time can be read from any CI run.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const label = process.argv[2] ?? 'tests';
const slowestShown = Number(process.argv[3] ?? 15);
const report = JSON.parse(readFileSync(process.argv[4] ?? 'results/vitest.json', 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
console.log(
  `${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`,
);

const files = report.testResults.map((file) => ({
  path: relative(process.cwd(), file.name),
  seconds: (file.endTime - file.startTime) / 1000,
}));
const byProject = new Map();
for (const file of files) {
  // apps/gateway/…, packages/store/…, examples/ledger/…: the first two segments name the project.
  const project = file.path.split('/').slice(0, 2).join('/');
  byProject.set(project, (byProject.get(project) ?? 0) + file.seconds);
}
const seconds = (s) => s.toFixed(1).padStart(7);
console.log(`\n${label}: the ${slowestShown} slowest test files (seconds in the file's tests)`);
for (const file of [...files].sort((a, b) => b.seconds - a.seconds).slice(0, slowestShown)) {
  console.log(`${seconds(file.seconds)}  ${file.path}`);
}
console.log(`\n${label}: seconds per project (sum over its files, which run in parallel)`);
for (const [project, total] of [...byProject].sort((a, b) => b[1] - a[1])) {
  console.log(`${seconds(total)}  ${project}`);
}
