import { readFileSync } from 'node:fs';
import pg from 'pg';
import { cpuNsOfRunning } from './cpu.js';

/**
 * The Postgres server's work for one client pool, as the CPU time of its backends: the pids
 * pg_stat_activity lists under the pool's application name, read from /proc before and after.
 * On a shared machine this swings far less than a rate does (another process's load slows the
 * backends' wall clock, not much the CPU they need per statement). Only for a server on this
 * host: `open` answers null when the backends are not postgres processes here (a remote server,
 * or one in another pid namespace), and the caller keeps the rate alone.
 */
export interface BackendCpuMeter {
  /** CPU ns the pool's backends have used so far (those alive now). */
  snapshot(): Promise<Map<number, number>>;
  close(): Promise<void>;
}

/** CPU ns used between two snapshots; a backend that appeared in between counts in full. */
export function cpuNsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ns] of after) total += ns - (before.get(pid) ?? 0);
  return total;
}

const isLocalPostgres = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return false;
  }
};

/**
 * `applicationName` names the pool; `{ prefix }` takes every pool whose name starts with it (a
 * stack's gateways and workers: `mcp-tasks-gateway`, `mcp-tasks worker w1`, …).
 */
export async function openBackendCpuMeter(
  databaseUrl: string,
  applicationName: string | { prefix: string },
): Promise<BackendCpuMeter | null> {
  const [operator, pattern] =
    typeof applicationName === 'string'
      ? ['=', applicationName]
      : ['LIKE', `${applicationName.prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`];
  // Its own connection, under another name: the meter's reads are not counted.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const pids = async (): Promise<number[]> =>
    (
      await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND application_name ${operator} $1`,
        [pattern],
      )
    ).rows.map((row) => row.pid);
  const first = await pids();
  if (first.length === 0 || !first.every(isLocalPostgres)) {
    await client.end();
    return null;
  }
  return {
    snapshot: async () => cpuNsOfRunning(await pids()),
    close: () => client.end(),
  };
}
