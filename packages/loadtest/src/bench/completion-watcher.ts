import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/**
 * Learns when tasks end by reading Postgres directly (one query per tick for every task waited
 * on), so the bench's clients do not load the gateways with polls. Counts its own queries: each is
 * a transaction, to be subtracted from the commits per task.
 */
export interface CompletionWatcher {
  waitFor(taskId: string): Promise<void>;
  queries(): number;
  stop(): Promise<void>;
}

const TICK_MS = 10;

export function startCompletionWatcher(databaseUrl: string): CompletionWatcher {
  const client = new pg.Client({ connectionString: databaseUrl });
  const waiting = new Map<string, () => void>();
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
      const { rows } = await client.query<{ id: string }>(
        "SELECT id FROM tasks WHERE id = ANY($1) AND status IN ('completed', 'failed', 'cancelled')",
        [ids],
      );
      for (const { id } of rows) {
        waiting.get(id)?.();
        waiting.delete(id);
      }
      await sleep(TICK_MS);
    }
  })();
  return {
    waitFor: (taskId) => new Promise<void>((resolve) => waiting.set(taskId, resolve)),
    queries: () => queries,
    async stop() {
      running = false;
      await loop;
      for (const resolve of waiting.values()) resolve();
      await client.end();
    },
  };
}
