import { Command, InvalidArgumentError, Option } from 'commander';
import { positiveNumber } from '../option-parsers.js';
import { seedFromText } from '../load/prng.js';
import { measureEndToEndRates } from './calibrate.js';
import { runSoak } from './run-soak.js';
import { writeSoakReport } from './soak-report.js';

/** `90s`, `30m`, `1h` or plain seconds → seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value.trim());
  if (match === null) throw new InvalidArgumentError('expected a duration such as 90s, 30m or 1h');
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3_600 }[match[2] ?? 's']!;
  if (!(seconds >= 1)) throw new InvalidArgumentError('expected at least one second');
  return seconds;
}

const share = (value: string) => {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('expected a share from 0 to 1');
  return n;
};
const rate = (value: string) => (value === 'auto' ? value : positiveNumber(value));

interface SoakCliOptions {
  duration: number;
  rate: number | 'auto';
  rateShare: number;
  window: number;
  ttl: number;
  retention: number;
  gateways: number;
  workers: number;
  workerConcurrency?: number;
  abandon: number;
  maxInFlight: number;
  seed: string;
  postgres: 'private' | 'shared';
  autovacuumNaptime: number;
  report?: string;
}

/**
 * --rate, or with 'auto' the share of the realistic mix's end-to-end rate measured now: the
 * soak's mix (input rounds, polling, cancels, listens) costs about what the bench's realistic
 * mix does, several times the no-input task, so a share of the no-input rate would overload it.
 */
async function soakRate(options: SoakCliOptions, log: (line: string) => void): Promise<number> {
  if (options.rate !== 'auto') return options.rate;
  const e2e = await measureEndToEndRates({ durationS: 10, warmupS: 3, concurrency: 32, log });
  const ratePerS = e2e.realistic * options.rateShare;
  log(
    `end-to-end 1+1 (the bench's lines): no-input ${e2e.noInput.toFixed(1)} tasks/s, realistic mix ${e2e.realistic.toFixed(1)} tasks/s; the soak runs at ${options.rateShare} × the realistic mix = ${ratePerS.toFixed(1)}/s`,
  );
  return ratePerS;
}

/** The soak, at the given or the calibrated rate; exit 1 when a target is missed. */
async function soak(options: SoakCliOptions): Promise<void> {
  const log = (line: string) => console.log(line);
  const ratePerS = await soakRate(options, log);
  const seed = /^-?\d+$/.test(options.seed) ? Number(options.seed) : seedFromText(options.seed);
  const run = await runSoak({
    durationS: options.duration,
    ratePerS,
    windowS: options.window,
    ttlMs: Math.round(options.ttl * 1_000),
    retentionMs: Math.round(options.retention * 1_000),
    gateways: options.gateways,
    workers: options.workers,
    workerConcurrency: options.workerConcurrency ?? Math.max(32, Math.ceil(2 * ratePerS)),
    abandonShare: options.abandon,
    maxInFlight: options.maxInFlight,
    seed,
    postgres: options.postgres,
    autovacuumNaptimeS: options.autovacuumNaptime,
    dir: options.report,
    log,
  });
  const report = await writeSoakReport(run.dir, run.outcome, run.targets);
  console.log(`history: ${run.historyPath}\nreport: ${report}`);
  for (const t of run.targets)
    console.log(`${t.met ? 'met   ' : 'MISSED'} ${t.target}: ${t.got} (want ${t.want})`);
  if (run.check.interruptedTasks > 0)
    console.log(
      `interrupted: ${run.check.interruptedTasks} task(s) cut short (not followed to their end; not counted as lost)`,
    );
  if (run.check.ok)
    console.log(`checker passed: ${run.check.acknowledgedTasks} acknowledged tasks, no violation`);
  else console.error(`checker failed: ${run.check.violations.length} violation(s)`);
  if (!run.targets.every((t) => t.met)) process.exitCode = 1;
}

/** `pnpm loadtest soak`: hours of constant-rate load with expiry and retention always running. */
export function soakCommand(): Command {
  return new Command('soak')
    .description(
      "constant-rate load of the mix for a long time on a stack with a short ttl and retention; samples latency, storage, autovacuum, the sweeper and Redis every window; checks the whole history and issue 25's targets (exit 1 when one is missed)",
    )
    .option('--duration <d>', 'how long the load runs: 90s, 30m, 1h', parseDuration, 1_800)
    .option(
      '--rate <r>',
      "lifecycles started per second, or 'auto': --rate-share of the bench's realistic-mix end-to-end rate (1 gateway + 1 worker), measured first in this run",
      rate,
      'auto',
    )
    .option(
      '--rate-share <f>',
      "with --rate auto: the share of the bench's realistic-mix rate",
      share,
      0.7,
    )
    .option('--window <s>', 'seconds per sample', positiveNumber, 60)
    .option('--ttl <s>', "the tasks' TASK_TTL_MS, in seconds", positiveNumber, 120)
    .option('--retention <s>', "the worker's TASK_RETENTION_MS, in seconds", positiveNumber, 300)
    .option('--gateways <g>', 'gateway replicas', positiveNumber, 1)
    .option('--workers <w>', 'worker processes', positiveNumber, 1)
    .option(
      '--worker-concurrency <n>',
      "the workers' WORKER_CONCURRENCY (default: 2 × rate, at least 32)",
      positiveNumber,
    )
    .option(
      '--abandon <share>',
      'multi_input clients that walk away (their tasks expire)',
      share,
      0.1,
    )
    .option(
      '--max-in-flight <n>',
      'lifecycles at once before arrivals are shed',
      positiveNumber,
      5_000,
    )
    .option('--seed <s>', 'seed of the mix (a number or a word)', '1')
    .addOption(
      new Option(
        '--postgres <where>',
        "private: a Postgres server of the soak's own (server defaults, fsync and autovacuum on); shared: a scratch database on DATABASE_URL's server, whatever its settings",
      )
        .choices(['private', 'shared'])
        .default('private'),
    )
    .option(
      '--autovacuum-naptime <s>',
      "the private server's autovacuum_naptime in seconds (the server default is 60)",
      positiveNumber,
      5,
    )
    .option('--report <dir>', 'write history.jsonl, soak.json and soak.html to DIR')
    .action(soak);
}
