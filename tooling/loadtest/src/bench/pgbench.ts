import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface PgbenchResult {
  clients: number;
  tps: number;
  latencyMs: number;
}

/**
 * pgbench with a one-statement script: a single-row INSERT, each its own transaction, into a table
 * of the bench's scratch database. The commit rate Postgres can sustain here.
 */
export async function runPgbenchInsert(
  databaseUrl: string,
  clients: number,
  durationS: number,
): Promise<PgbenchResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS bench_insert (id bigserial PRIMARY KEY, payload text NOT NULL)',
    );
  } finally {
    await client.end();
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-pgbench-'));
  const script = join(dir, 'insert.sql');
  await writeFile(script, "INSERT INTO bench_insert (payload) VALUES ('x');\n");
  const { stdout } = await run('pgbench', [
    '--no-vacuum',
    `--file=${script}`,
    `--client=${clients}`,
    `--jobs=${Math.min(clients, 2)}`,
    `--time=${durationS}`,
    databaseUrl,
  ]);
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
  const latency = /latency average = ([\d.]+) ms/.exec(stdout);
  if (tps === null || latency === null) throw new Error(`unexpected pgbench output:\n${stdout}`);
  return { clients, tps: Number(tps[1]), latencyMs: Number(latency[1]) };
}
