import { formatEffects } from './check/effects.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DATABASE_TOPOLOGIES, type DatabaseTopology } from './load/database-topology.js';
import { CHAOS_PLAN_NAMES, resolveChaosPlans, type RedisTopology } from './chaos/registry.js';
import { checkHistory, type CheckResult } from './check/checker.js';
import type { HistoryRecord } from './history/records.js';
import { runFairness } from './fairness/fairness-run.js';
import { ChaosFailedError, runLoad, type LoadRun } from './load/run-load.js';
import { startClientTracing } from './load/client-tracing.js';
import { seedFromText } from './load/prng.js';
import { readHistory } from './history/read-history.js';
import { writeHtmlReport } from './report/html-report.js';
import { renderSummaryTable, renderViolations } from './report/summary-table.js';
import { summarizeRun } from './report/summary.js';
import { buildTimeline } from './report/timeline.js';
import { soakCommand } from './soak/soak-command.js';

/**
 * `pnpm loadtest check HISTORY [--report DIR]`: checks a recorded history offline, prints the
 * summary and every violation, writes the HTML report if asked; exits 1 on any violation.
 */
async function check(path: string, options: { report?: string }): Promise<void> {
  const records = await readHistory(path);
  await reportOn(records, checkHistory(records), options.report);
}

async function reportOn(
  records: HistoryRecord[],
  result: CheckResult,
  reportDir: string | undefined,
): Promise<void> {
  const options = { report: reportDir };
  const summary = summarizeRun(records, result);
  console.log(renderSummaryTable(summary, process.stdout.isTTY));
  if (options.report !== undefined) {
    const written = await writeHtmlReport(
      options.report,
      summary,
      buildTimeline(records, result),
      result,
    );
    console.log(`report: ${written}`);
  }
  for (const r of result.reExecutions)
    console.log(
      `re-executed after takeover: task ${r.taskId} step ${r.step} in epochs ${r.epochs.join(', ')}`,
    );
  for (const t of result.staleTails)
    console.log(
      `stale tail, its writes fenced: task ${t.taskId} step ${t.step} on ${t.worker} (epoch ${t.epoch}) ran ${Math.round(t.endMs - t.leaseDeadlineMs)} ms past its lease deadline, logged ${t.outcome ?? '(no outcome)'}${t.takenOver ? ', taken over after the deadline' : ''}`,
    );
  if (result.effects !== undefined) console.log(formatEffects(result.effects));
  if (result.ok) {
    console.log(`checker passed: ${result.acknowledgedTasks} acknowledged tasks, no violation`);
    return;
  }
  console.error(renderViolations(result));
  console.error(`checker failed: ${result.violations.length} violation(s)`);
  process.exitCode = 1;
}

/** `--topology`: the three Postgres shapes, and `cluster` (direct Postgres on a Redis Cluster). */
const STACK_TOPOLOGIES = [...DATABASE_TOPOLOGIES, 'cluster'] as const;
type StackTopology = (typeof STACK_TOPOLOGIES)[number];

function splitTopology(topology: StackTopology): {
  database: DatabaseTopology;
  redis: RedisTopology;
} {
  return topology === 'cluster'
    ? { database: 'direct', redis: 'cluster' }
    : { database: topology, redis: 'single' };
}

interface RunOptions {
  tasks: number;
  concurrency: number;
  duration?: number;
  gateways: number;
  workers: number;
  chaos: string;
  /** The stack's Postgres (direct, pooler, replicas) or `cluster`: direct Postgres, Redis Cluster. */
  topology: StackTopology;
  chaosPhase: number;
  chaosPasses?: number;
  seed: string;
  taskBound: number;
  leaseMs: number;
  report?: string;
  target?: string;
  token?: string;
  probeToken?: string;
}

/** `pnpm loadtest [options]`: the load (and chaos) run, then the same report as `check`. */
async function run(options: RunOptions): Promise<void> {
  const { database, redis } = splitTopology(options.topology);
  const chaos = resolveChaosPlans(options.chaos, database, redis);
  let target;
  if (options.target !== undefined) {
    if (chaos.length > 0) throw new Error('--chaos needs processes of our own; drop --target');
    if (options.topology !== 'direct')
      throw new Error('--topology needs a stack of our own; drop --target');
    const token = options.token ?? process.env.LOADTEST_TOKEN;
    const probeToken = options.probeToken ?? process.env.LOADTEST_PROBE_TOKEN;
    if (token === undefined || probeToken === undefined)
      throw new Error(
        '--target needs two tenants: --token/LOADTEST_TOKEN and --probe-token/LOADTEST_PROBE_TOKEN',
      );
    target = {
      url: options.target,
      tenants: {
        heavy: { name: 'heavy', token },
        light: { name: 'light', token: probeToken },
      },
    };
  }
  const seed = /^-?\d+$/.test(options.seed) ? Number(options.seed) : seedFromText(options.seed);
  // OTEL_* set: the client's spans are exported too, and the stack's processes inherit the env.
  const tracing = await startClientTracing(process.env);
  let result: LoadRun;
  try {
    result = await runLoad({
      tasks: options.tasks,
      concurrency: options.concurrency,
      durationMs: options.duration === undefined ? undefined : options.duration * 1_000,
      gateways: options.gateways,
      workers: options.workers,
      chaos,
      topology: database,
      redisTopology: redis,
      chaosPhaseMs: options.chaosPhase * 1_000,
      ...(options.chaosPasses === undefined ? {} : { chaosPasses: options.chaosPasses }),
      seed,
      taskBoundMs: options.taskBound * 1_000,
      leaseMs: options.leaseMs,
      dir: options.report,
      target,
      log: (line) => console.log(line),
    }).finally(() => tracing?.shutdown());
  } catch (error) {
    // A chaos round threw: the run failed (exit 1, like a violation), not the tool (exit 2).
    if (!(error instanceof ChaosFailedError)) throw error;
    console.error(error.message);
    process.exitCode = 1;
    return;
  }
  console.log(`history: ${result.historyPath}`);
  await reportOn(result.records, result.check, options.report);
}

const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};

const nonEmpty = (value: string) => {
  if (value.trim() === '') throw new InvalidArgumentError('expected a directory');
  return value;
};

const program = new Command('loadtest')
  .description('Load and chaos tests for mcp-tasks: record a history, check it, report on it.')
  .showHelpAfterError()
  // `check --report DIR` belongs to check, not to the run's own --report.
  .enablePositionalOptions()
  .option('--tasks <n>', 'lifecycles to run (one task each)', positiveInt, 200)
  .option('--concurrency <c>', 'simulated clients at once', positiveInt, 20)
  .option('--duration <s>', 'stop starting lifecycles after S seconds', positiveInt)
  .option('--gateways <g>', 'gateway replicas behind the proxy', positiveInt, 2)
  .option('--workers <w>', 'worker processes', positiveInt, 2)
  .option('--chaos <plan>', `${CHAOS_PLAN_NAMES.join(' | ')}, or a comma-separated list`, 'none')
  .addOption(
    new Option(
      '--topology <t>',
      'direct; pooler (PgBouncer in transaction mode); replicas (two, one 1 s late, behind one reader endpoint); cluster (a local Redis Cluster)',
    )
      .choices(STACK_TOPOLOGIES)
      .default('direct'),
  )
  .option('--chaos-phase <s>', 'seconds each plan runs before the next one', positiveInt, 15)
  .option(
    '--chaos-passes <n>',
    'end the load once every plan had N phases (default: chaos for as long as the load lasts)',
    positiveInt,
  )
  .option('--seed <s>', 'seed of the mix and the chaos (a number or a word)', '1')
  .option('--task-bound <s>', 'longest create → terminal a task may take', positiveInt, 120)
  .option(
    '--lease-ms <ms>',
    "the workers' LEASE_MS (short, so takeovers happen)",
    positiveInt,
    2_000,
  )
  .option('--report <dir>', 'write history.jsonl and the HTML report to DIR', nonEmpty)
  .option('--target <url>', 'an existing MCP endpoint instead of a stack of our own (no chaos)')
  .option('--token <token>', "with --target: the heavy tenant (80 % of the mix's tasks)")
  .option(
    '--probe-token <token>',
    "with --target: the light tenant (20 %); each tenant probes the other's ids",
  )
  .action(run);
program
  .command('fairness')
  .description(
    "issue 24's measurement: one tenant's backlog of slow_compute tasks on 1 gateway + 1 worker, then another tenant's single task; exits 1 unless it completes within the bound",
  )
  .option('--backlog <n>', "tasks in the heavy tenant's backlog", positiveInt, 3_000)
  .option('--backlog-seconds <s>', 'seconds each backlog task runs', positiveInt, 2)
  .option('--single-seconds <s>', "seconds the light tenant's task runs", positiveInt, 1)
  .option('--worker-concurrency <n>', "the worker's WORKER_CONCURRENCY", positiveInt, 8)
  .option('--bound <s>', 'create → completed bound for the single task', positiveInt, 15)
  .action(
    async (options: {
      backlog: number;
      backlogSeconds: number;
      singleSeconds: number;
      workerConcurrency: number;
      bound: number;
    }) => {
      const boundMs = options.bound * 1_000;
      const result = await runFairness({ ...options, boundMs, log: (line) => console.log(line) });
      const fifoS = (options.backlog * options.backlogSeconds) / options.workerConcurrency;
      console.log(
        `globex's single task: completed ${(result.singleMs / 1_000).toFixed(1)} s after its create (bound ${options.bound} s; first in, first out: after the backlog, ~${Math.round(fifoS)} s)`,
      );
      console.log(
        `acme's backlog still waiting then: ${result.backlogLeft} of ${options.backlog}; worker claims that took a fairer task: ${result.fairerClaims}`,
      );
      if (!(result.singleMs <= boundMs)) {
        console.error('fairness: the single task did not complete within the bound');
        process.exitCode = 1;
      }
    },
  );
program.addCommand(soakCommand());
program
  .command('check')
  .description(
    'check a recorded history (JSON lines) for lost tasks, illegal transitions, reused input keys, cross-tenant reads, wrong results and overlapping steps',
  )
  .argument('<history>', 'the history file (JSON lines)')
  .option('--report <dir>', 'also write a self-contained HTML report to DIR/index.html', nonEmpty)
  .action(check);

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
