import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { LEADERSHIP_APPLICATION_NAME } from '../sweeper/leadership.js';
import { readLastSweep, type LastSweep } from '../sweeper/sweeper-state.js';

export interface HeldByWorker {
  worker: string;
  tasksHeld: number;
  /** The latest lease expiry among its tasks: a worker renewing them keeps it in the future. */
  latestLeaseExpiry: Date;
}

export interface StoreHealth {
  /** `working` tasks no live lease holds: what workers would claim next. */
  runnable: number;
  oldestRunnableCreatedAt: Date | null;
  inputRequired: number;
  held: HeldByWorker[];
  /**
   * Workers' leadership connections (one per worker process: the candidates), and whether one of
   * them holds the sweeper's lock right now (it is held only while a sweep runs).
   */
  sweeperCandidates: number;
  sweepInProgress: boolean;
  /** The last sweep the leader recorded (migration 0020): which worker, when, what it did. */
  lastSweep: LastSweep | null;
  tasksBytes: number;
  eventsBytes: number;
  /** Ended tasks kept for their retention, and the earliest expiry among them. */
  terminalKept: number;
  oldestTerminalExpiry: Date | null;
  /** Seconds the read replica's replay is behind (null: no replica, or it is idle and caught up). */
  replicaLagSeconds?: number | null;
}

/** What the console's health page shows of the store: a handful of indexed reads. */
export async function readStoreHealth(
  db: Db,
  scope: { tenant: string | null },
): Promise<StoreHealth> {
  const tenant = scope.tenant;
  const byTenant = tenant === null ? sql`TRUE` : sql`tenant = ${tenant}`;
  const [queue, held, leaders, sweep, sizes, terminal] = await Promise.all([
    sql<{ runnable: string; oldest: Date | null; input_required: string }>`
      SELECT
        (SELECT count(*) FROM tasks WHERE ${byTenant} AND status = 'working'
           AND (lease_owner IS NULL OR lease_expires_at <= now())) AS runnable,
        (SELECT min(created_at) FROM tasks WHERE ${byTenant} AND status = 'working'
           AND (lease_owner IS NULL OR lease_expires_at <= now())) AS oldest,
        (SELECT count(*) FROM tasks WHERE ${byTenant} AND status = 'input_required') AS input_required
    `.execute(db),
    sql<{ worker: string; held: string; latest: Date }>`
      SELECT lease_owner AS worker, count(*) AS held, max(lease_expires_at) AS latest FROM tasks
      WHERE ${byTenant} AND status = 'working' AND lease_owner IS NOT NULL
      GROUP BY lease_owner ORDER BY lease_owner LIMIT 200
    `.execute(db),
    sql<{ candidates: string; sweeping: boolean }>`
      SELECT count(*) AS candidates,
        coalesce(bool_or(EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid
          AND l.locktype = 'advisory' AND l.granted)), false) AS sweeping
      FROM pg_stat_activity a
      WHERE a.application_name = ${LEADERSHIP_APPLICATION_NAME} AND a.datname = current_database()
    `.execute(db),
    readLastSweep(db),
    sql<{ tasks: string; events: string }>`
      SELECT pg_total_relation_size('tasks') AS tasks, pg_total_relation_size('task_events') AS events
    `.execute(db),
    sql<{ kept: string; oldest: Date | null }>`
      SELECT count(*) AS kept, min(expires_at) AS oldest FROM tasks
      WHERE ${byTenant} AND status IN ('completed', 'failed', 'cancelled')
    `.execute(db),
  ]);
  const q = queue.rows[0];
  return {
    runnable: Number(q?.runnable ?? 0),
    oldestRunnableCreatedAt: q?.oldest ?? null,
    inputRequired: Number(q?.input_required ?? 0),
    held: held.rows.map((row) => ({
      worker: row.worker,
      tasksHeld: Number(row.held),
      latestLeaseExpiry: row.latest,
    })),
    // Only an all-tenant operator sees the cluster-wide figures.
    sweeperCandidates: tenant === null ? Number(leaders.rows[0]?.candidates ?? 0) : 0,
    sweepInProgress: tenant === null && leaders.rows[0]?.sweeping === true,
    lastSweep: tenant === null ? (sweep ?? null) : null,
    tasksBytes: tenant === null ? Number(sizes.rows[0]?.tasks ?? 0) : 0,
    eventsBytes: tenant === null ? Number(sizes.rows[0]?.events ?? 0) : 0,
    terminalKept: Number(terminal.rows[0]?.kept ?? 0),
    oldestTerminalExpiry: terminal.rows[0]?.oldest ?? null,
  };
}

/** How far a streaming replica's replay is behind, in seconds (null when it has replayed nothing). */
export async function readReplicaLagSeconds(readDb: Db): Promise<number | null> {
  const row = await sql<{ lag: number | null }>`
    SELECT extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS lag
  `.execute(readDb);
  return row.rows[0]?.lag ?? null;
}

/** Per minute over the last hour, oldest first: tasks created, completed and failed. */
export interface Throughput {
  /** Unix seconds of each minute. */
  minutes: number[];
  created: number[];
  completed: number[];
  failed: number[];
}

export async function readThroughput(
  db: Db,
  scope: { tenant: string | null },
): Promise<Throughput> {
  const tenant = scope.tenant;
  const rows = await sql<{ minute: number; kind: string; count: string }>`
    SELECT extract(epoch FROM date_trunc('minute', e.at))::float8 AS minute, e.kind, count(*) AS count
    FROM task_events e
    WHERE e.at > now() - interval '1 hour' AND e.kind IN ('created', 'completed', 'failed', 'expired')
      AND ${tenant === null ? sql`TRUE` : sql`EXISTS (SELECT 1 FROM tasks t WHERE t.id = e.task_id AND t.tenant = ${tenant})`}
    GROUP BY 1, 2
  `.execute(db);
  const start = Math.floor(Date.now() / 60_000) * 60 - 59 * 60;
  const minutes = Array.from({ length: 60 }, (_, i) => start + i * 60);
  const series = {
    created: minutes.map(() => 0),
    completed: minutes.map(() => 0),
    failed: minutes.map(() => 0),
  };
  for (const row of rows.rows) {
    const index = Math.round((row.minute - start) / 60);
    if (index < 0 || index >= 60) continue;
    const kind = row.kind === 'expired' ? 'failed' : (row.kind as keyof typeof series);
    series[kind][index] = (series[kind][index] ?? 0) + Number(row.count);
  }
  return { minutes, ...series };
}

/**
 * Per minute over the last hour, oldest first: the median and 95th percentile of the seconds
 * from create to settle of the tasks that settled that minute (the `seconds` of their settle
 * event, migration 0020); null for a minute in which none settled.
 */
export interface Latency {
  minutes: number[];
  p50: (number | null)[];
  p95: (number | null)[];
}

export async function readLatency(db: Db, scope: { tenant: string | null }): Promise<Latency> {
  const tenant = scope.tenant;
  const rows = await sql<{ minute: number; p50: number; p95: number }>`
    SELECT extract(epoch FROM date_trunc('minute', e.at))::float8 AS minute,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY (e.data ->> 'seconds')::float8) AS p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY (e.data ->> 'seconds')::float8) AS p95
    FROM task_events e
    WHERE e.at > now() - interval '1 hour'
      AND e.kind IN ('completed', 'failed', 'expired', 'cancelled') AND e.data ? 'seconds'
      AND ${tenant === null ? sql`TRUE` : sql`EXISTS (SELECT 1 FROM tasks t WHERE t.id = e.task_id AND t.tenant = ${tenant})`}
    GROUP BY 1
  `.execute(db);
  const start = Math.floor(Date.now() / 60_000) * 60 - 59 * 60;
  const minutes = Array.from({ length: 60 }, (_, i) => start + i * 60);
  const p50: (number | null)[] = minutes.map(() => null);
  const p95: (number | null)[] = minutes.map(() => null);
  for (const row of rows.rows) {
    const index = Math.round((row.minute - start) / 60);
    if (index < 0 || index >= 60) continue;
    p50[index] = row.p50;
    p95[index] = row.p95;
  }
  return { minutes, p50, p95 };
}
