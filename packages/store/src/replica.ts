import { sql } from 'kysely';
import type { Db } from './database.js';
import { ReplicaLagError } from './errors.js';

const FIRST_DELAY_MS = 2;
const MAX_DELAY_MS = 50;

/**
 * R11: a handle goes out only once a read on the replica would find the row. Polls the replica's
 * replay position with a short backoff until it reaches commitLsn, or throws ReplicaLagError.
 * A `readDb` that is not in recovery (a primary) has every commit it acknowledged, so it passes.
 */
export async function waitUntilVisible(
  readDb: Db,
  commitLsn: string,
  options: { timeoutMs: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = FIRST_DELAY_MS;
  for (;;) {
    const result = await sql<{ replay: string | null; visible: boolean | null }>`
      SELECT pg_last_wal_replay_lsn()::text AS replay,
             pg_last_wal_replay_lsn() >= ${commitLsn}::pg_lsn AS visible
    `.execute(readDb);
    const row = result.rows[0];
    if (row === undefined || row.replay === null || row.visible === true) return;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new ReplicaLagError(commitLsn, options.timeoutMs, row.replay);
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, remaining)));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}
