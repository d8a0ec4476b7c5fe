import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkHistory, type CheckResult } from '../check/checker.js';
import { readHistory } from '../history/read-history.js';
import { createHistoryRecorder, type HistoryRecorder } from '../history/recorder.js';
import { parseStepLogLine } from '../history/step-log-collector.js';
import { readFinal, runLifecycle, type LoadContext } from '../load/lifecycle.js';
import { mixPlans } from '../load/mix.js';
import { startTopology } from '../load/run-load.js';
import { summarizeRun } from '../report/summary.js';
import { tapLatencies } from './latency-tap.js';
import {
  evaluateSoakTargets,
  type SoakOutcome,
  type SoakWindow,
  type TargetResult,
} from './soak-targets.js';
import {
  createStorageSampler,
  type StorageSample,
  type StorageSampler,
} from './storage-sampler.js';
import { createWindowedLatency, type WindowedLatency } from './windowed-latency.js';

export interface SoakOptions {
  durationS: number;
  /** Lifecycles started per second, whatever the stack answers (an open loop). */
  ratePerS: number;
  windowS: number;
  ttlMs: number;
  retentionMs: number;
  gateways: number;
  workers: number;
  workerConcurrency: number;
  /** The share of multi_input lifecycles that walk away from their input (they expire). */
  abandonShare: number;
  /** Past this many lifecycles at once, arrivals are shed (and counted), not queued. */
  maxInFlight: number;
  seed: number;
  /**
   * `private` (default): a Postgres server of the soak's own, on the server defaults with fsync
   * on, so autovacuum runs as in production (CI servers often switch it off, and without it the
   * dead-tuple and size figures say nothing). `shared`: a scratch database on DATABASE_URL's
   * server, whatever its settings.
   */
  postgres?: 'private' | 'shared';
  /**
   * The private server's `autovacuum_naptime`, in seconds (default 5: what docs/deployment.md
   * recommends for the tasks database; the server default, 60, lets a minute of non-HOT updates'
   * dead versions pile up between autovacuum's visits).
   */
  autovacuumNaptimeS?: number;
  dir?: string;
  log: (line: string) => void;
}

/** The soak's own server: production's durability and vacuum, whatever the machine's server. */
const SOAK_POSTGRES_SETTINGS = { fsync: 'on', autovacuum: 'on' } as const;

export interface SoakRun {
  dir: string;
  historyPath: string;
  outcome: SoakOutcome;
  targets: TargetResult[];
  check: CheckResult;
}

/** The create and get latencies, per window. */
interface SoakLatency {
  create: WindowedLatency;
  get: WindowedLatency;
}

/** The first and last phase: five minutes each, or a third of a shorter run. */
const PHASE_S = 300;
/** Storage at minute 10 is the reference (retention has been running); half of a shorter run. */
const REFERENCE_S = 600;
/** How often the arrival loop wakes to start the lifecycles that are due. */
const TICK_MS = 20;
/**
 * After an interrupt, how long the lifecycles still running get to stop at their next look. A
 * terminal's Ctrl-C stops the gateways and workers as well, so waiting out their tasks' bound
 * (ttl + 60 s) would only poll a stack that is gone.
 */
const INTERRUPT_GRACE_MS = 3_000;

/**
 * The soak: a stack of its own with a short ttl and retention, so expiry and retention run all
 * the time, under a constant rate of the load test's mix for the whole duration. Every window
 * it records the latencies, the rate, the tables' sizes and tuples, autovacuum runs, the
 * sweeper's rows and Redis's memory; at the end the checker reads the whole history.
 */
export async function runSoak(options: SoakOptions): Promise<SoakRun> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'soak-')));
  await mkdir(dir, { recursive: true });
  const historyPath = join(dir, 'history.jsonl');
  const latency: SoakLatency = { create: createWindowedLatency(), get: createWindowedLatency() };
  const clock = createWindowClock(options.windowS * 1_000);
  const { counts, windowOf } = clock;
  const recorder = tapLatencies(createHistoryRecorder(historyPath), (method, ms, failed) => {
    const w = windowOf();
    if (failed) counts(w).errors += 1;
    else (method === 'tools/call' ? latency.create : latency.get).record(w, ms);
    if (method === 'tools/call' && !failed) counts(w).created += 1;
  });
  const topology = await startSoakTopology(options, recorder);
  const stack = topology.stack!;
  const sampler = createStorageSampler({
    databaseUrl: stack.databaseUrl,
    redisUrl: stack.redisUrl,
    workerMetricsUrls: () => stack.workers.map((w) => w.readyUrl.replace(/\/healthz$/, '/metrics')),
  });
  const postgresSettings = await logPostgresSettings(options, sampler);
  // A task may wait for its ttl (a client that walked away), then for the sweep that fails it.
  const taskBoundMs = options.ttlMs + 60_000;
  // Aborted on an interrupt: no lifecycle starts after it, and running ones stop at their next look.
  const stopLoad = new AbortController();
  const ctx: LoadContext = {
    recorder,
    endpoints: topology.endpoints,
    tenants: topology.tenants,
    taskBoundMs,
    stop: stopLoad.signal,
  };
  recordRunHeader(recorder, options, taskBoundMs, postgresSettings);
  const windows: SoakWindow[] = [];
  const lifecycles = createLifecycles(ctx, options, () => (counts(windowOf()).terminal += 1));
  // Ctrl-C ends the load early: the processes still stop, and what was sampled is reported. A
  // terminal's Ctrl-C reaches the process more than once (pnpm and tsx pass it on as well), so
  // the handler stays until the teardown is done: a second signal must not kill it half-way.
  let interrupted = false;
  const interrupt = () => {
    if (interrupted) return;
    interrupted = true;
    options.log('soak: interrupted; stopping the load and reporting what was sampled');
    // The checker counts the lifecycles running now as cut short, not as lost tasks.
    recorder.interrupted({ inFlight: lifecycles.running.size });
    stopLoad.abort();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  try {
    await driveLoad(
      options,
      historyPath,
      { clock, sampler, lifecycles, latency, windows },
      () => interrupted,
    );
  } catch (error) {
    options.log(`soak: stopped: ${describe(error)}`);
    throw error;
  } finally {
    await sampler.close();
    await topology.teardown();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    // Lifecycles cut short by a failure or an interrupt may still write: that must not hide the
    // failure, nor fail an interrupted run.
    await recorder.close().catch((error: unknown) => {
      if (lifecycles.failure() === undefined && !interrupted) throw error;
    });
  }
  const { outcome, check } = await soakOutcome(options, historyPath, windows, latency);
  const targets = evaluateSoakTargets(outcome);
  await writeFile(
    join(dir, 'soak.json'),
    JSON.stringify({ options: { ...options, log: undefined }, outcome, targets }, null, 1),
  );
  return { dir, historyPath, outcome, targets, check };
}

/** The soak's stack: a short ttl and retention, no tenant limits; step lines go to the history. */
function startSoakTopology(options: SoakOptions, recorder: HistoryRecorder) {
  return startTopology(
    {
      gateways: options.gateways,
      workers: options.workers,
      chaos: [],
      topology: 'direct',
      leaseMs: 30_000,
      log: options.log,
      ...((options.postgres ?? 'private') === 'private'
        ? {
            privatePostgres: {
              ...SOAK_POSTGRES_SETTINGS,
              autovacuum_naptime: `${options.autovacuumNaptimeS ?? 5}s`,
            },
          }
        : {}),
      env: {
        TASK_TTL_MS: String(options.ttlMs),
        TASK_RETENTION_MS: String(options.retentionMs),
        WORKER_CONCURRENCY: String(options.workerConcurrency),
        // The soak measures the service, not the per-tenant limits (two tenants carry it all).
        TENANT_MAX_IN_FLIGHT: '0',
        TENANT_CREATE_RATE: '0',
      },
    },
    (text) => {
      const step = parseStepLogLine(text);
      if (step !== undefined) recorder.step(step);
    },
  );
}

/** The server's settings, logged (with a warning when autovacuum is off). */
async function logPostgresSettings(options: SoakOptions, sampler: StorageSampler) {
  const postgresSettings = await sampler.settings();
  options.log(
    `postgres: ${options.postgres ?? 'private'} server, ${Object.entries(postgresSettings)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ')}`,
  );
  if (postgresSettings.autovacuum !== 'on')
    options.log(
      'WARNING: autovacuum is off on this server: dead tuples pile up until the end, so the storage targets say nothing about the service (run without --postgres shared)',
    );
  return postgresSettings;
}

/** The whole run's figures: the checker's verdict, the first and last phases, the reference window. */
async function soakOutcome(
  options: SoakOptions,
  historyPath: string,
  windows: SoakWindow[],
  latency: SoakLatency,
) {
  const records = await readHistory(historyPath);
  const check = checkHistory(records);
  const summary = summarizeRun(records, check);
  const phaseWindows = Math.max(
    1,
    Math.round(Math.min(PHASE_S, options.durationS / 3) / options.windowS),
  );
  const lastWindow = windows.length - 1;
  const referenceS = options.durationS >= 2 * REFERENCE_S ? REFERENCE_S : options.durationS / 2;
  const outcome: SoakOutcome = {
    windows,
    askedRatePerS: options.ratePerS,
    phaseWindows,
    phases: {
      createFirst: latency.create.summary(0, phaseWindows - 1),
      createLast: latency.create.summary(lastWindow - phaseWindows + 1, lastWindow),
      getFirst: latency.get.summary(0, phaseWindows - 1),
      getLast: latency.get.summary(lastWindow - phaseWindows + 1, lastWindow),
    },
    referenceWindow: Math.max(
      0,
      windows.findIndex((w) => w.endS >= referenceS),
    ),
    lost: summary.lost,
    violations: check.violations.length,
  };
  return { outcome, check };
}

/** The history's run record: the bound on a task's life and the soak's settings. */
function recordRunHeader(
  recorder: HistoryRecorder,
  options: SoakOptions,
  taskBoundMs: number,
  postgresSettings: Awaited<ReturnType<StorageSampler['settings']>>,
): void {
  recorder.run({
    taskBoundMs,
    seed: String(options.seed),
    config: {
      soak: true,
      durationS: options.durationS,
      ratePerS: options.ratePerS,
      ttlMs: options.ttlMs,
      retentionMs: options.retentionMs,
      gateways: options.gateways,
      workers: options.workers,
      workerConcurrency: options.workerConcurrency,
      abandonShare: options.abandonShare,
      postgres: options.postgres ?? 'private',
      postgresSettings,
    },
  });
}

/**
 * Starts the mix's lifecycles one by one; the first failure is logged and kept (the load stops
 * on it). Each finished task is counted and read back at once.
 */
function createLifecycles(ctx: LoadContext, options: SoakOptions, onTerminal: () => void) {
  const plans = mixPlans(options.seed, { abandonShare: options.abandonShare });
  const running = new Set<Promise<unknown>>();
  let failure: Error | undefined;
  const start = () => {
    const plan = plans.next().value;
    const lifecycle = (async () => {
      const outcome = await runLifecycle(ctx, plan);
      // Cut short by an interrupt: the stack may be stopping, so it is not read back.
      if (outcome.taskId === undefined || ctx.stop?.aborted === true) return;
      onTerminal();
      // Read back at once: retention deletes it minutes later, so an end-of-run read would not.
      await readFinal(ctx, outcome.taskId, plan.tenant);
    })()
      .catch((error: unknown) => {
        // After an interrupt a lifecycle may outlive the stack and the history: not a failure.
        if (ctx.stop?.aborted === true) return;
        if (failure === undefined) options.log(`soak: a lifecycle failed: ${describe(error)}`);
        failure ??= error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => running.delete(lifecycle));
    running.add(lifecycle);
  };
  return {
    running,
    start,
    failure: () => failure,
  };
}

type WindowCounts = { created: number; terminal: number; errors: number; shed: number };

/** The run's windows: which one it is now (from the load's start), and what each counted. */
function createWindowClock(windowMs: number) {
  const windowCounts: WindowCounts[] = [];
  let loadStart = performance.now();
  return {
    counts: (w: number) => (windowCounts[w] ??= { created: 0, terminal: 0, errors: 0, shed: 0 }),
    windowOf: () => Math.floor((performance.now() - loadStart) / windowMs),
    /** The load starts now: window 0 begins. */
    start: () => (loadStart = performance.now()),
  };
}

/**
 * The open loop: lifecycles started at the rate (shed past maxInFlight), a storage sample at
 * the end of each window, until the last window, a failure or an interrupt; then the running
 * lifecycles are awaited.
 */
async function driveLoad(
  options: SoakOptions,
  historyPath: string,
  run: {
    clock: ReturnType<typeof createWindowClock>;
    sampler: StorageSampler;
    lifecycles: ReturnType<typeof createLifecycles>;
    latency: SoakLatency;
    windows: SoakWindow[];
  },
  interrupted: () => boolean,
): Promise<void> {
  const { clock, sampler, lifecycles, latency, windows } = run;
  const { running } = lifecycles;
  let started = 0;
  let previous = await sampler.sample();
  const loadStart = clock.start();
  options.log(
    `soak: ${options.ratePerS.toFixed(1)} lifecycles/s for ${options.durationS} s, a sample every ${options.windowS} s; ttl ${options.ttlMs} ms, retention ${options.retentionMs} ms; history ${historyPath}`,
  );
  const endAt = loadStart + options.durationS * 1_000;
  const windowMs = options.windowS * 1_000;
  const windowCount = Math.max(1, Math.floor(options.durationS / options.windowS));
  let nextSampleAt = loadStart + windowMs;
  while (windows.length < windowCount && lifecycles.failure() === undefined && !interrupted()) {
    const due = Math.floor(
      ((Math.min(performance.now(), endAt) - loadStart) / 1_000) * options.ratePerS,
    );
    for (; started < due; started += 1) {
      if (running.size >= options.maxInFlight) clock.counts(clock.windowOf()).shed += 1;
      else lifecycles.start();
    }
    if (performance.now() >= nextSampleAt) {
      const index = windows.length;
      const storage = await sampler.sample();
      windows.push(
        windowRecord(
          index,
          options.windowS,
          clock.counts(index),
          latency,
          storage,
          previous,
          running.size,
        ),
      );
      previous = storage;
      options.log(describeWindow(windows.at(-1)!));
      nextSampleAt += windowMs;
    }
    await sleep(TICK_MS);
  }
  const failure = lifecycles.failure();
  if (failure !== undefined) throw failure;
  options.log(`soak: load done; waiting for ${running.size} lifecycles to end`);
  if (!interrupted()) {
    await Promise.all(running);
    return;
  }
  await Promise.race([Promise.all(running), sleep(INTERRUPT_GRACE_MS, undefined, { ref: false })]);
  if (running.size > 0)
    options.log(`soak: ${running.size} lifecycles still running after the interrupt; not waiting`);
}

function windowRecord(
  index: number,
  windowS: number,
  counted: { created: number; terminal: number; errors: number; shed: number },
  latency: SoakLatency,
  storage: StorageSample,
  previous: StorageSample,
  inFlight: number,
): SoakWindow {
  return {
    index,
    startS: index * windowS,
    endS: (index + 1) * windowS,
    createdPerS: counted.created / windowS,
    terminalPerS: counted.terminal / windowS,
    create: latency.create.summary(index),
    get: latency.get.summary(index),
    errors: counted.errors,
    inFlight,
    shed: counted.shed,
    storage,
    swept: {
      expired: storage.swept.expired - previous.swept.expired,
      deleted: storage.swept.deleted - previous.swept.deleted,
      redispatched: storage.swept.redispatched - previous.swept.redispatched,
    },
  };
}

const describe = (error: unknown) =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** One line per window while the soak runs. */
export function describeWindow(w: SoakWindow): string {
  const tasks = w.storage.tables.tasks;
  return [
    `[${Math.round(w.endS)} s]`,
    `created ${w.createdPerS.toFixed(1)}/s, ended ${w.terminalPerS.toFixed(1)}/s, in flight ${w.inFlight}${w.shed > 0 ? `, shed ${w.shed}` : ''}`,
    `create p50/p99 ${w.create.p50.toFixed(1)}/${w.create.p99.toFixed(1)} ms, get ${w.get.p50.toFixed(1)}/${w.get.p99.toFixed(1)} ms`,
    tasks === undefined
      ? 'tasks: -'
      : `tasks ${tasks.liveTuples} live, ${tasks.deadTuples} dead, ${mb(tasks.tableBytes)} + ${mb(tasks.indexBytes)} idx, ${tasks.autovacuums} autovacuums`,
    `swept ${w.swept.expired} expired, ${w.swept.deleted} deleted`,
    `redis ${mb(w.storage.redisUsedBytes)}`,
    ...(w.errors > 0 ? [`errors ${w.errors}`] : []),
  ].join('; ');
}
