import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/**
 * Learns when tasks end (or reach another status) by reading Postgres directly (one query per
 * tick for every task waited on), so the bench's clients do not load the gateways with polls.
 * Counts its own queries: each is a transaction, to be subtracted from the commits per task.
 */
export interface CompletionWatcher {
  /** Resolves once the task is in one of `statuses` (default: any terminal status). */
  waitFor(taskId: string, statuses?: readonly string[]): Promise<void>;
  queries(): number;
  /**
   * Makes Postgres count every query so far in pg_stat_database (itself one more query). A
   * backend flushes its statistics at most once a second and, when it goes idle within a second
   * of its last flush, only 10 s later: the watcher's last queries of a phase would be missing
   * from the commits that the bench subtracts them from.
   */
  flushStats(): Promise<void>;
  stop(): Promise<void>;
}

const TICK_MS = 10;
const TERMINAL = ['completed', 'failed', 'cancelled'];

export function startCompletionWatcher(databaseUrl: string): CompletionWatcher {
  const client = new pg.Client({ connectionString: databaseUrl });
  const waiting = new Map<string, { statuses: readonly string[]; resolve: () => void }>();
  let queries = 0;
  let running = true;
  const connected = client.connect();
  const loop = (async () => {
    await connected;
    while (running) {
      if (waiting.size === 0) {
        await sleep(TICK_MS);
        continue;
      }
      const ids = [...waiting.keys()];
      queries += 1;
      const { rows } = await client.query<{ id: string; status: string }>(
        'SELECT id, status FROM tasks WHERE id = ANY($1)',
        [ids],
      );
      for (const { id, status } of rows) {
        const waiter = waiting.get(id);
        if (waiter === undefined || !waiter.statuses.includes(status)) continue;
        waiter.resolve();
        waiting.delete(id);
      }
      await sleep(TICK_MS);
    }
  })();
  return {
    waitFor: (taskId, statuses = TERMINAL) =>
      new Promise<void>((resolve) => waiting.set(taskId, { statuses, resolve })),
    queries: () => queries,
    async flushStats() {
      await connected;
      queries += 1;
      // Flushed before the reply's ReadyForQuery: counted once this resolves.
      await client.query('SELECT pg_stat_force_next_flush()');
    },
    async stop() {
      running = false;
      await loop;
      for (const { resolve } of waiting.values()) resolve();
      await client.end();
    },
  };
}
