import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/** What one sweep did, as the leader records it (migration 0020's `sweeper_state`). */
export interface SweepRecord {
  workerId: string;
  durationMs: number;
  expired: number;
  redispatched: number;
  deleted: number;
  retentionMs: number;
  intervalMs: number;
}

export interface LastSweep extends SweepRecord {
  sweptAt: Date;
}

/** One upsert of the single row, stamped with the database clock. */
export async function recordSweep(db: Db, sweep: SweepRecord): Promise<void> {
  const row = {
    worker_id: sweep.workerId,
    swept_at: sql<Date>`now()`,
    duration_ms: Math.round(sweep.durationMs),
    expired: sweep.expired,
    redispatched: sweep.redispatched,
    deleted: sweep.deleted,
    retention_ms: sweep.retentionMs,
    interval_ms: sweep.intervalMs,
  };
  await db
    .insertInto('sweeper_state')
    .values(row)
    .onConflict((oc) => oc.column('singleton').doUpdateSet(row))
    .execute();
}

export async function readLastSweep(db: Db): Promise<LastSweep | undefined> {
  const row = await db.selectFrom('sweeper_state').selectAll().executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    workerId: row.worker_id,
    sweptAt: row.swept_at,
    durationMs: row.duration_ms,
    expired: row.expired,
    redispatched: row.redispatched,
    deleted: row.deleted,
    retentionMs: Number(row.retention_ms),
    intervalMs: row.interval_ms,
  };
}
