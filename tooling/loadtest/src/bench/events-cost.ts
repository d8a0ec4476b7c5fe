import pg from 'pg';
import {
  claimLease,
  completeTask,
  createDb,
  createTasks,
  migrateToLatest,
  renewLease,
  saveCheckpoint,
  type Db,
} from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase } from '@mcp-tasks/testing';
import { cpuNsBetween, openBackendCpuMeter, type BackendCpuMeter } from './backend-cpu.js';
import { median, pairedRatios } from './cpu-per-task.js';

/**
 * What the task history costs on the hot paths (issue 27): the store-level lifecycle of a task
 * as a worker drives it — create, claim, two checkpoints, two renewals, complete: 7 statements —
 * in `concurrency` loops, with the task_events triggers on and with them disabled (runEventsCost).
 * Two figures: the rate, and — robust to the shared machine's load, which swings the rate by
 * ±10 % — the server's work per lifecycle, as the CPU time of the pools' backends (backend-cpu.ts;
 * a local server only). Only the bench's own scratch databases are altered.
 */
export interface EventsCostResult {
  /** Lifecycles per second, the median of the rounds, triggers on and off. */
  on: number;
  off: number;
  /** on / off: 1 means free; the target is ≥ 0.9 (under 10 % cost). */
  ratio: number;
  rounds: number;
  /**
   * Postgres backend CPU per lifecycle, µs, the median of `rounds + 1` rounds with on and off at
   * once (4 + 4 loops for the default 8); `pairRatios` each round's on / off, and `ratio` their
   * median (1 means free; under 10 % cost is ≤ 1.11, the rate's ≥ 0.9). Null when the server is not on this host (no /proc to read its backends).
   */
  serverCpu: { onUs: number; offUs: number; ratio: number; pairRatios: number[] } | null;
}

const APPLICATION_NAME = 'bench-events-cost';

const TRIGGERS = ['task_events_on_insert', 'task_events_on_update', 'task_events_on_delete'];
const LEASE_MS = 30_000;

/** The task history on or off on one database: its task_events triggers on `tasks`. */
export async function setEventTriggers(databaseUrl: string, enabled: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const mode = enabled ? 'ENABLE' : 'DISABLE';
    for (const trigger of TRIGGERS)
      await client.query(`ALTER TABLE tasks ${mode} TRIGGER ${trigger}`);
  } finally {
    await client.end();
  }
}

async function lifecycle(db: Db, loop: number): Promise<void> {
  const id = newTaskId();
  await createTasks(db, [
    {
      id,
      owner: { tenant: 'bench-events', principal: `loop-${loop}` },
      operation: { method: 'tools/call', toolName: 'bench_events', arguments: { loop } },
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      statusMessage: null,
    },
  ]);
  const claim = await claimLease(db, id, `bench-events-worker-${loop}`, LEASE_MS);
  if (claim === null) throw new Error(`bench events: could not claim ${id}`);
  await saveCheckpoint(db, claim.fence, { step: 1 }, 'step 1', { leaseMs: LEASE_MS });
  await renewLease(db, claim.fence, LEASE_MS);
  await saveCheckpoint(db, claim.fence, { step: 2 }, 'step 2', { leaseMs: LEASE_MS });
  await renewLease(db, claim.fence, LEASE_MS);
  await completeTask(db, claim.fence, { content: [] }, 'done');
}

interface Round {
  lifecyclesPerS: number;
  /** Backend CPU µs per lifecycle; undefined without a meter. */
  cpuUsPerLifecycle?: number;
}

async function measure(
  db: Db,
  concurrency: number,
  durationS: number,
  meter?: BackendCpuMeter | null,
): Promise<Round> {
  const before = await meter?.snapshot();
  const deadline = Date.now() + durationS * 1000;
  let done = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      while (Date.now() < deadline) {
        await lifecycle(db, loop);
        done++;
      }
    }),
  );
  const lifecyclesPerS = done / ((Date.now() - started) / 1000);
  const after = await meter?.snapshot();
  if (before === undefined || after === undefined || done === 0) return { lifecyclesPerS };
  return { lifecyclesPerS, cpuUsPerLifecycle: cpuNsBetween(before, after) / 1000 / done };
}

interface Side {
  databaseUrl: string;
  db: Db;
  meter: BackendCpuMeter | null;
}

/**
 * Two measurements. The rate: the triggers on and off in turns on the bench's database, all the
 * loops, as this figure always was. The server's work: both at once, the triggers on in one of two
 * fresh twin databases and off in the other, half the loops each, in the same seconds, so whatever
 * else loads the shared machine loads both alike and their tables grow alike; the roles swap every
 * round, so neither database is always "on". (At once, the rates say little: both sides wait on the same
 * WAL flushes, so they move together whatever each costs.)
 */
export async function runEventsCost(options: {
  databaseUrl: string;
  concurrency: number;
  durationS: number;
  warmupS: number;
  rounds?: number;
  /** Brings each twin to the schema of `databaseUrl` when that is not the latest (a probe's). */
  prepareTwin?: (twin: Db) => Promise<void>;
}): Promise<EventsCostResult> {
  const rounds = options.rounds ?? 3;
  const rate = await alternatingRates(options, rounds);
  return { ...rate, rounds, serverCpu: await simultaneousServerCpu(options, rounds + 1) };
}

async function alternatingRates(
  options: { databaseUrl: string; concurrency: number; durationS: number; warmupS: number },
  rounds: number,
): Promise<{ on: number; off: number; ratio: number }> {
  const db = createDb({ connectionString: options.databaseUrl, max: options.concurrency + 2 });
  try {
    await measure(db, options.concurrency, options.warmupS);
    const on: number[] = [];
    const off: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so a drift of the shared machine hits both alike.
      for (const enabled of round % 2 === 0 ? [true, false] : [false, true]) {
        await setEventTriggers(options.databaseUrl, enabled);
        const { lifecyclesPerS } = await measure(db, options.concurrency, options.durationS);
        (enabled ? on : off).push(lifecyclesPerS);
      }
    }
    await setEventTriggers(options.databaseUrl, true);
    const rate = { on: median(on), off: median(off) };
    return { ...rate, ratio: rate.off === 0 ? 0 : rate.on / rate.off };
  } finally {
    await db.destroy();
  }
}

async function simultaneousServerCpu(
  options: {
    databaseUrl: string;
    concurrency: number;
    durationS: number;
    warmupS: number;
    prepareTwin?: (twin: Db) => Promise<void>;
  },
  rounds: number,
): Promise<EventsCostResult['serverCpu']> {
  const loopsPerSide = Math.max(1, Math.floor(options.concurrency / 2));
  // Two fresh twins, not the bench's database (busy with the rates just now): both sides start
  // from the same empty tables.
  const twins = [
    await createTestDatabase('bench_events_twin'),
    await createTestDatabase('bench_events_twin'),
  ];
  const sides: Side[] = [];
  try {
    for (const twin of twins) {
      const migrating = createDb({
        connectionString: twin.connectionString,
        statementTimeoutMs: 0,
      });
      await migrateToLatest(migrating);
      await options.prepareTwin?.(migrating);
      await migrating.destroy();
    }
    for (const { connectionString: databaseUrl } of twins) {
      const db = createDb({
        connectionString: databaseUrl,
        max: loopsPerSide + 2,
        applicationName: APPLICATION_NAME,
      });
      sides.push({ databaseUrl, db, meter: null });
    }
    await Promise.all(sides.map((side) => measure(side.db, loopsPerSide, options.warmupS)));
    // After the warm-up, so the pools' connections are open and listed.
    for (const side of sides)
      side.meter = await openBackendCpuMeter(side.databaseUrl, APPLICATION_NAME);
    if (sides.some((side) => side.meter === null)) return null;
    const on: Round[] = [];
    const off: Round[] = [];
    // Round 0 settles and is not counted: its ratio stood 0.2 above the others in every trial.
    for (let round = 0; round <= rounds; round++) {
      const onSide = round % 2;
      await Promise.all(sides.map((side, i) => setEventTriggers(side.databaseUrl, i === onSide)));
      const results = await Promise.all(
        sides.map((side) => measure(side.db, loopsPerSide, options.durationS, side.meter)),
      );
      if (round === 0) continue;
      on.push(results[onSide]!);
      off.push(results[1 - onSide]!);
    }
    return serverCpuOf(on, off);
  } finally {
    for (const side of sides) {
      await side.meter?.close();
      await side.db.destroy();
    }
    for (const twin of twins) await twin.drop();
  }
}

function serverCpuOf(on: Round[], off: Round[]): EventsCostResult['serverCpu'] {
  const onUs = on.map((r) => r.cpuUsPerLifecycle ?? 0);
  const offUs = off.map((r) => r.cpuUsPerLifecycle ?? 0);
  // Each round's on and off ran in the same seconds: the ratio is the median of those pairs.
  const paired = pairedRatios(offUs, onUs);
  return {
    onUs: median(onUs),
    offUs: median(offUs),
    ratio: paired.median,
    pairRatios: paired.ratios,
  };
}

/** The (g) line's second figure: the server's work per lifecycle, on vs off. */
export function describeServerCpu(result: EventsCostResult): string {
  const cpu = result.serverCpu;
  if (cpu === null) return 'server CPU not measured (Postgres is not on this host)';
  const pairs = cpu.pairRatios.map((r) => r.toFixed(2)).join(', ');
  return `Postgres backend CPU ${cpu.onUs.toFixed(0)} vs ${cpu.offUs.toFixed(0)} µs per lifecycle = ${cpu.ratio.toFixed(3)} on/off (target ≤ 1.11; on and off at once in twin databases, each round's ratio ${pairs})`;
}
