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

/**
 * What the task history costs on the hot paths (issue 27): the store-level lifecycle of a task
 * as a worker drives it — create, claim, two checkpoints, two renewals, complete: 7 statements —
 * in `concurrency` loops, with the task_events triggers on and with them disabled on this scratch
 * database, alternating, `rounds` times each. Only the bench's own database is altered.
 */
export interface EventsCostResult {
  /** Lifecycles per second, the median of the rounds, triggers on and off. */
  on: number;
  off: number;
  /** on / off: 1 means free; the target is ≥ 0.9 (under 10 % cost). */
  ratio: number;
  rounds: number;
}

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

async function measure(db: Db, concurrency: number, durationS: number): Promise<number> {
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
  return done / ((Date.now() - started) / 1000);
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
  const rounds = options.rounds ?? 3;
  const db = createDb({ connectionString: options.databaseUrl, max: options.concurrency + 2 });
  try {
    await measure(db, options.concurrency, options.warmupS);
    const on: number[] = [];
    const off: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so a drift of the shared machine hits both alike.
      for (const enabled of round % 2 === 0 ? [true, false] : [false, true]) {
        await setEventTriggers(options.databaseUrl, enabled);
        (enabled ? on : off).push(await measure(db, options.concurrency, options.durationS));
      }
    }
    await setEventTriggers(options.databaseUrl, true);
    const result = { on: median(on), off: median(off), rounds };
    return { ...result, ratio: result.off === 0 ? 0 : result.on / result.off };
  } finally {
    await db.destroy();
  }
}
