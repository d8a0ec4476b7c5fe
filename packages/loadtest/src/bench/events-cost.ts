import pg from 'pg';
import {
  claimLease,
  completeTask,
  createDb,
  createTasks,
  renewLease,
  saveCheckpoint,
  type Db,
} from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { cpuNsBetween, openBackendCpuMeter, type BackendCpuMeter } from './backend-cpu.js';

/**
 * What the task history costs on the hot paths (issue 27): the store-level lifecycle of a task
 * as a worker drives it — create, claim, two checkpoints, two renewals, complete: 7 statements —
 * in `concurrency` loops, with the task_events triggers on and with them disabled on this scratch
 * database, alternating, `rounds` times each. Only the bench's own database is altered.
 * Two figures: the rate, and — robust to the shared machine's load, which swings the rate by
 * ±10 % — the server's work per lifecycle, as the CPU time of the pool's backends (backend-cpu.ts;
 * a local server only).
 */
export interface EventsCostResult {
  /** Lifecycles per second, the median of the rounds, triggers on and off. */
  on: number;
  off: number;
  /** on / off: 1 means free; the target is ≥ 0.9 (under 10 % cost). */
  ratio: number;
  rounds: number;
  /**
   * Postgres backend CPU per lifecycle, µs, the median of the rounds, on and off; `ratio` is
   * on / off (1 means free; under 10 % cost is ≤ 1.11, the rate's ≥ 0.9) and `pairRatios` each
   * round's on / off. Null when the server is not on this host (no /proc to read its backends).
   */
  serverCpu: { onUs: number; offUs: number; ratio: number; pairRatios: number[] } | null;
}

const APPLICATION_NAME = 'bench-events-cost';

const TRIGGERS = ['task_events_on_insert', 'task_events_on_update', 'task_events_on_delete'];
const LEASE_MS = 30_000;

async function setEventTriggers(databaseUrl: string, enabled: boolean): Promise<void> {
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

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

export async function runEventsCost(options: {
  databaseUrl: string;
  concurrency: number;
  durationS: number;
  warmupS: number;
  rounds?: number;
}): Promise<EventsCostResult> {
  const rounds = options.rounds ?? 5;
  const db = createDb({
    connectionString: options.databaseUrl,
    max: options.concurrency + 2,
    applicationName: APPLICATION_NAME,
  });
  let meter: BackendCpuMeter | null = null;
  try {
    await measure(db, options.concurrency, options.warmupS);
    // After the warm-up, so the pool's connections are open and listed.
    meter = await openBackendCpuMeter(options.databaseUrl, APPLICATION_NAME);
    const on: Round[] = [];
    const off: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so a drift of the shared machine hits both alike.
      for (const enabled of round % 2 === 0 ? [true, false] : [false, true]) {
        await setEventTriggers(options.databaseUrl, enabled);
        (enabled ? on : off).push(await measure(db, options.concurrency, options.durationS, meter));
      }
    }
    await setEventTriggers(options.databaseUrl, true);
    const rate = {
      on: median(on.map((r) => r.lifecyclesPerS)),
      off: median(off.map((r) => r.lifecyclesPerS)),
    };
    return {
      ...rate,
      ratio: rate.off === 0 ? 0 : rate.on / rate.off,
      rounds,
      serverCpu: meter === null ? null : serverCpuOf(on, off),
    };
  } finally {
    await meter?.close();
    await db.destroy();
  }
}

function serverCpuOf(on: Round[], off: Round[]): EventsCostResult['serverCpu'] {
  const onUs = on.map((r) => r.cpuUsPerLifecycle ?? 0);
  const offUs = off.map((r) => r.cpuUsPerLifecycle ?? 0);
  const result = { onUs: median(onUs), offUs: median(offUs) };
  return {
    ...result,
    ratio: result.offUs === 0 ? 0 : result.onUs / result.offUs,
    pairRatios: onUs.map((us, i) => (offUs[i] ? us / offUs[i] : 0)),
  };
}

/** The (g) line's second figure: the server's work per lifecycle, on vs off. */
export function describeServerCpu(result: EventsCostResult): string {
  const cpu = result.serverCpu;
  if (cpu === null) return 'server CPU not measured (Postgres is not on this host)';
  const pairs = cpu.pairRatios.map((r) => r.toFixed(2)).join(', ');
  return `Postgres backend CPU ${cpu.onUs.toFixed(0)} vs ${cpu.offUs.toFixed(0)} µs per lifecycle = ${cpu.ratio.toFixed(3)} on/off (target ≤ 1.11; rounds ${pairs})`;
}
