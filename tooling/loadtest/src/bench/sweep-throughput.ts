import {
  createDb,
  databaseNow,
  deleteExpiredTaskBatch,
  expireTaskBatch,
  type SweepBatch,
} from '@mcp-tasks/store';
import pg from 'pg';

/**
 * The sweeper's two bulk statements on a backlog of `rows` tasks: `expireTasks` over `working`
 * tasks whose TTL ran out (one in ten held under a lease that also ran out, as after a worker
 * crash), then `deleteExpiredTasks` over the same rows, now terminal and past retention. Each
 * batch size is measured on a fresh backlog, in turns with the others over `rounds` rounds, so
 * the shared machine's load falls on all of them alike. The backlog is written with the row
 * triggers off (its fair rounds and expiry set directly): filling is not what is measured.
 */
export interface SweepVariant {
  batchSize: number;
  /** Each batch starts where the last one ended (`from`), as the sweeper does, or at the start. */
  resume: boolean;
}

export interface SweepThroughputResult extends SweepVariant {
  rows: number;
  /** Rows per second of each round, in round order. */
  expireRowsPerSecond: number[];
  deleteRowsPerSecond: number[];
}

export async function fillExpiredBacklog(connectionString: string, rows: number): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('TRUNCATE tasks');
    await client.query('SET session_replication_role = replica');
    await client.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, created_at,
                          last_updated_at, ttl_ms, expires_at, lease_owner, lease_expires_at,
                          attempts, fair_round, unheld_due_at)
       SELECT 'backlog-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'generate_report',
              '{"rows": 10, "title": "backlog"}'::jsonb, 'working',
              now() - interval '2 hours' + g * interval '1 millisecond',
              now() - interval '2 hours' + g * interval '1 millisecond', 60000,
              now() - interval '119 minutes' + g * interval '1 millisecond',
              CASE WHEN g % 10 = 0 THEN 'crashed-worker' END,
              CASE WHEN g % 10 = 0 THEN now() - interval '1 hour' END,
              CASE WHEN g % 10 = 0 THEN 1 ELSE 0 END, g / 50,
              -- What the before-write trigger (off while filling) sets for an unheld task (0022).
              CASE WHEN g % 10 <> 0 THEN now() - interval '2 hours' + g * interval '1 millisecond' END
       FROM generate_series(1, $1::int) AS g`,
      [rows],
    );
    await client.query('RESET session_replication_role');
    await client.query('VACUUM ANALYZE tasks');
  } finally {
    await client.end();
  }
}

async function holdSnapshot(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  await client.query('SELECT count(*) FROM tasks WHERE false');
  return client;
}

/** Batches of `limit` until one comes back short; rows per second over the whole drain. */
async function drain(
  variant: SweepVariant,
  runBatch: (limit: number, from: Date | undefined) => Promise<SweepBatch>,
): Promise<number> {
  const started = performance.now();
  let total = 0;
  let from: Date | undefined;
  for (;;) {
    const batch = await runBatch(variant.batchSize, from);
    total += batch.count;
    if (variant.resume) from = batch.reached ?? from;
    if (batch.count < variant.batchSize) break;
  }
  return total / ((performance.now() - started) / 1_000);
}

export async function runSweepThroughput(options: {
  connectionString: string;
  rows: number;
  variants: readonly SweepVariant[];
  rounds: number;
  /**
   * Keep a transaction with an old snapshot open during each drain (a long report, a standby's
   * feedback): dead rows cannot be pruned, nor their index entries marked dead, meanwhile.
   */
  holdSnapshot?: boolean;
  log?: (line: string) => void;
}): Promise<SweepThroughputResult[]> {
  const db = createDb({ connectionString: options.connectionString, statementTimeoutMs: 0 });
  const results = options.variants.map((variant) => ({
    ...variant,
    rows: options.rows,
    expireRowsPerSecond: [] as number[],
    deleteRowsPerSecond: [] as number[],
  }));
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const result of results) {
        await fillExpiredBacklog(options.connectionString, options.rows);
        const holder =
          options.holdSnapshot === true ? await holdSnapshot(options.connectionString) : undefined;
        const now = await databaseNow(db);
        const expire = await drain(result, (limit, from) =>
          expireTaskBatch(db, now, { limit, from }),
        );
        const deleteNow = await databaseNow(db);
        const remove = await drain(result, (limit, from) =>
          deleteExpiredTaskBatch(db, deleteNow, 0, { limit, from }),
        );
        await holder?.end();
        result.expireRowsPerSecond.push(expire);
        result.deleteRowsPerSecond.push(remove);
        options.log?.(
          `sweep round ${round + 1} ${describeVariant(result)}: expire ${Math.round(expire)} rows/s, ` +
            `delete ${Math.round(remove)} rows/s`,
        );
      }
    }
  } finally {
    await db.destroy();
  }
  return results;
}

export const describeVariant = (variant: SweepVariant): string =>
  `batch ${variant.batchSize}${variant.resume ? ' resumed' : ' from start'}`;
