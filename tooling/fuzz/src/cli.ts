import { parseArgs } from 'node:util';
import { runFuzz } from './run-fuzz.js';

const USAGE = `pnpm fuzz [--runs N] [--seed S] [--concurrency C]

Sends N seeded, malformed and mutated MCP messages (default 10000) at a real gateway and worker
on a fresh Postgres database and Redis prefix (DATABASE_URL, REDIS_URL), and fails if any answer
is >= 500, a reset, a hang or a body with internals, or if either process is unhealthy after.
The same seed sends the same messages.`;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const concurrency = Number(values.concurrency);
for (const [name, value] of Object.entries({ runs, seed, concurrency })) {
  if (!Number.isInteger(value) || value < (name === 'seed' ? 0 : 1)) {
    console.error(
      `--${name}: expected a ${name === 'seed' ? 'non-negative' : 'positive'} integer\n\n${USAGE}`,
    );
    process.exit(2);
  }
}

console.log(`fuzz: ${runs} messages, seed ${seed}, concurrency ${concurrency}`);
let shown = 0;
const report = await runFuzz({
  runs,
  seed,
  concurrency,
  onProgress: (sent) => {
    if (sent - shown >= 1000) {
      shown = sent;
      console.log(`  ${sent} sent`);
    }
  },
});
console.log(JSON.stringify({ ...report, violations: report.violations.slice(0, 20) }, null, 2));
const healthy = Object.values(report.health).every(Boolean);
const failed = report.violations.length > 0 || report.gatewayErrorLogs.length > 0 || !healthy;
console.log(
  `fuzz: ${report.messages} messages in ${(report.durationMs / 1000).toFixed(1)} s, seed ${seed}: ` +
    `${report.violations.length} violations, ${report.gatewayErrorLogs.length} gateway error lines, ` +
    `gateway ${report.health.gatewayLive && report.health.gatewayReady ? 'healthy' : 'UNHEALTHY'}, ` +
    `worker ${report.health.workerLive ? 'healthy' : 'UNHEALTHY'} → ${failed ? 'FAIL' : 'PASS'}`,
);
process.exit(failed ? 1 : 0);
