import pg from 'pg';
import { Redis } from 'ioredis';

/** What Postgres says of one table at a sample. */
export interface TableSample {
  liveTuples: number;
  deadTuples: number;
  /** Heap (with its TOAST and maps) and all indexes, bytes. */
  tableBytes: number;
  indexBytes: number;
  autovacuums: number;
  autoanalyzes: number;
  updates: number;
  hotUpdates: number;
}

/** Storage and sweeper counters at one instant; the soak keeps the differences per window. */
export interface StorageSample {
  tables: Record<string, TableSample>;
  redisUsedBytes: number;
  /** Sums over the workers' /metrics: mcp_worker_swept_tasks_total and …_redispatched_total. */
  swept: { expired: number; deleted: number; redispatched: number };
}

/** The tables a soak watches grow (or not): the tasks and their history. */
export const WATCHED_TABLES = ['tasks', 'task_events'] as const;

const TABLES_SQL = `
  SELECT relname,
         n_live_tup, n_dead_tup, autovacuum_count, autoanalyze_count, n_tup_upd, n_tup_hot_upd,
         pg_table_size(relid) AS table_bytes, pg_indexes_size(relid) AS index_bytes
    FROM pg_stat_user_tables
   WHERE relname = ANY($1)`;

/** `name{labels} value` lines of a Prometheus text page whose name and labels match. */
export function sumMetric(page: string, name: string, label?: [string, string]): number {
  let sum = 0;
  for (const line of page.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    if (label !== undefined && !(match[2] ?? '').includes(`${label[0]}="${label[1]}"`)) continue;
    sum += Number(match[3]);
  }
  return sum;
}

export interface StorageSampler {
  sample(): Promise<StorageSample>;
  /** The server settings the storage figures depend on (autovacuum above all), as Postgres reports them. */
  settings(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * Reads pg_stat_user_tables and the relation sizes, Redis's used_memory and the workers'
 * sweeper counters. Statistics are Postgres's own (flushed by each backend within a second or
 * so), which is what an operator's dashboard shows too.
 */
export function createStorageSampler(options: {
  databaseUrl: string;
  redisUrl: string;
  /** The workers' /metrics URLs, read at each sample (a worker that does not answer counts 0). */
  workerMetricsUrls: () => string[];
}): StorageSampler {
  // One connection held for the whole soak: a busy server may have none to spare later.
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 1, idleTimeoutMillis: 0 });
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  const metricPages = async () =>
    Promise.all(
      options.workerMetricsUrls().map(async (url) => {
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
          return response.ok ? await response.text() : '';
        } catch {
          return '';
        }
      }),
    );
  return {
    async sample() {
      const [{ rows }, memory, pages] = await Promise.all([
        pool.query<Record<string, string>>(TABLES_SQL, [WATCHED_TABLES]),
        redis.info('memory'),
        metricPages(),
      ]);
      const tables: Record<string, TableSample> = {};
      for (const row of rows)
        tables[row.relname!] = {
          liveTuples: Number(row.n_live_tup),
          deadTuples: Number(row.n_dead_tup),
          tableBytes: Number(row.table_bytes),
          indexBytes: Number(row.index_bytes),
          autovacuums: Number(row.autovacuum_count),
          autoanalyzes: Number(row.autoanalyze_count),
          updates: Number(row.n_tup_upd),
          hotUpdates: Number(row.n_tup_hot_upd),
        };
      const sweptOf = (step: string) =>
        pages.reduce(
          (n, page) => n + sumMetric(page, 'mcp_worker_swept_tasks_total', ['step', step]),
          0,
        );
      return {
        tables,
        redisUsedBytes: Number(/^used_memory:(\d+)/m.exec(memory)?.[1] ?? Number.NaN),
        swept: {
          expired: sweptOf('expire'),
          deleted: sweptOf('delete'),
          redispatched: pages.reduce(
            (n, page) => n + sumMetric(page, 'mcp_worker_tasks_redispatched_total'),
            0,
          ),
        },
      };
    },
    async settings() {
      const { rows } = await pool.query<{ name: string; setting: string }>(
        "SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'fsync', 'shared_buffers', 'autovacuum_naptime') ORDER BY name",
      );
      return Object.fromEntries(rows.map((row) => [row.name, row.setting]));
    },
    async close() {
      redis.disconnect();
      await pool.end();
    },
  };
}
