import {
  claimLease,
  completeTask,
  createDb,
  createTask,
  migrateToLatest,
  saveCheckpoint,
  type Db,
} from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { startFailoverCluster } from '@mcp-tasks/testing';
import { createLatencyRecorder, type LatencySummary } from '../report/latency.js';

/** One setting's run: task lifecycles written through the store, as a gateway and worker do. */
export interface SyncCommitRun {
  synchronousCommit: 'local' | 'remote_apply';
  lifecyclesPerS: number;
  /** One write (create, claim, checkpoint or complete), ms. */
  writeLatency: LatencySummary;
}

export interface SyncCommitResult {
  concurrency: number;
  durationS: number;
  /** Alternating local, remote_apply, local, remote_apply…: the machine's load drifts. */
  runs: SyncCommitRun[];
  /** Summed over the runs of each setting. */
  local: { lifecyclesPerS: number; writeP50Ms: number };
  remoteApply: { lifecyclesPerS: number; writeP50Ms: number };
}

/**
 * The cost of lossless failover: the writes of a task's life a client can see (create, claim,
 * checkpoint, complete: four commits) on a primary with a synchronous streaming standby, once with
 * `synchronous_commit = remote_apply` (each commit waits until the standby applied it: what
 * docs/failover.md recommends) and once with `local` (the primary alone: what a deployment
 * without a synchronous standby does), in the same run, in turns. Per session, so one cluster
 * serves both.
 */
export async function runSyncCommitBench(options: {
  durationS: number;
  warmupS: number;
  concurrency: number;
  rounds?: number;
  log: (line: string) => void;
}): Promise<SyncCommitResult> {
  const cluster = await startFailoverCluster({ databases: ['bench'] });
  try {
    await cluster.addStandby();
    const url = cluster.primary.url('bench');
    const setup = createDb({ connectionString: url, max: 1 });
    await migrateToLatest(setup);
    await setup.destroy();
    const runs: SyncCommitRun[] = [];
    for (let round = 0; round < (options.rounds ?? 2); round += 1) {
      for (const setting of ['local', 'remote_apply'] as const) {
        const withSetting = new URL(url);
        withSetting.searchParams.set('options', `-c synchronous_commit=${setting}`);
        const db = createDb({
          connectionString: withSetting.toString(),
          max: options.concurrency,
        });
        try {
          await lifecycles(db, options.concurrency, options.warmupS);
          const run = await lifecycles(db, options.concurrency, options.durationS);
          runs.push({ synchronousCommit: setting, ...run });
          options.log(
            `(f) synchronous_commit=${setting}: ${run.lifecyclesPerS.toFixed(1)} lifecycles/s, write p50 ${run.writeLatency.p50.toFixed(2)} ms`,
          );
        } finally {
          await db.destroy();
        }
      }
    }
    const total = (setting: SyncCommitRun['synchronousCommit']) => {
      const of = runs.filter((r) => r.synchronousCommit === setting);
      return {
        lifecyclesPerS: of.reduce((sum, r) => sum + r.lifecyclesPerS, 0) / of.length,
        writeP50Ms: of.reduce((sum, r) => sum + r.writeLatency.p50, 0) / of.length,
      };
    };
    return {
      concurrency: options.concurrency,
      durationS: options.durationS,
      runs,
      local: total('local'),
      remoteApply: total('remote_apply'),
    };
  } finally {
    await cluster.stop();
  }
}

async function lifecycles(
  db: Db,
  concurrency: number,
  durationS: number,
): Promise<{ lifecyclesPerS: number; writeLatency: LatencySummary }> {
  const latency = createLatencyRecorder();
  const timed = async <T>(write: () => Promise<T>): Promise<T> => {
    const began = performance.now();
    const value = await write();
    latency.record(performance.now() - began);
    return value;
  };
  const owner = { tenant: 'bench', principal: 'bench' };
  const endAt = performance.now() + durationS * 1_000;
  let done = 0;
  const client = async (n: number) => {
    while (performance.now() < endAt) {
      const { task } = await timed(() =>
        createTask(db, {
          id: newTaskId(),
          owner,
          operation: { method: 'tools/call', toolName: 'bench', arguments: { n } },
          ttlMs: 60_000,
          pollIntervalMs: 1_000,
          statusMessage: null,
        }),
      );
      const claim = await timed(() => claimLease(db, task.id, `bench-${n}`, 30_000));
      if (claim === null) throw new Error(`could not claim ${task.id}`);
      await timed(() => saveCheckpoint(db, claim.fence, { step: 1 }, 'step 1 of 1'));
      await timed(() => completeTask(db, claim.fence, { content: [] }));
      done += 1;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, n) => client(n)));
  return {
    lifecyclesPerS: done / ((performance.now() - began) / 1_000),
    writeLatency: latency.summary(),
  };
}
