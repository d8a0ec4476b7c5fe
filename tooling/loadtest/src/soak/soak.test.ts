import { readFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSoak } from './run-soak.js';
import { writeSoakReport } from './soak-report.js';

/**
 * A short soak on a real stack (1 gateway, 1 worker, a Postgres server of its own, real Redis): the per-window
 * samples come from the real engines and the sweeper's counters, and with a ttl of seconds the
 * walked-away tasks expire and retention deletes rows while the load runs.
 */
describe('pnpm loadtest soak', () => {
  it('samples every window, expires and deletes while the load runs, and checks the whole history', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'soak-test-'));
    const run = await runSoak({
      durationS: 30,
      ratePerS: 6,
      windowS: 6,
      // Walked-away tasks fail at 5 s (and the next sweep); retention deletes them 12 s later,
      // after their client has seen them fail (it looks every 5 s).
      ttlMs: 5_000,
      retentionMs: 12_000,
      gateways: 1,
      workers: 1,
      workerConcurrency: 32,
      abandonShare: 0.5,
      maxInFlight: 1_000,
      seed: 25,
      dir,
      log: () => {},
    });
    const { windows } = run.outcome;
    expect(windows.map((w) => [w.startS, w.endS])).toEqual([
      [0, 6],
      [6, 12],
      [12, 18],
      [18, 24],
      [24, 30],
    ]);
    for (const w of windows) {
      expect(w.createdPerS).toBeGreaterThan(0);
      expect(w.create.count).toBeGreaterThan(0);
      expect(w.storage.tables.tasks?.tableBytes).toBeGreaterThan(0);
      expect(w.storage.tables.task_events?.tableBytes).toBeGreaterThan(0);
      expect(w.storage.redisUsedBytes).toBeGreaterThan(0);
    }
    const total = (key: 'expired' | 'deleted') => windows.reduce((n, w) => n + w.swept[key], 0);
    expect(total('expired')).toBeGreaterThan(0);
    expect(total('deleted')).toBeGreaterThan(0);
    expect(run.check.violations).toEqual([]);
    expect(run.outcome.lost).toBe(0);
    expect(run.targets.map((t) => t.target)).toEqual([
      'creates per second held',
      'create p99, last ÷ first 2 window(s)',
      'tasks/get p99, last ÷ first 2 window(s)',
      'tasks table + indexes, end ÷ window 3 (18 s)',
      'dead ÷ live tuples in tasks, worst window from the reference on',
      'lost tasks',
      'checker violations',
    ]);
    const saved = JSON.parse(await readFile(join(dir, 'soak.json'), 'utf8')) as {
      outcome: { windows: unknown[] };
    };
    expect(saved.outcome.windows).toHaveLength(5);
    // On a server of its own with production's vacuum (the machine's server may have it off).
    const runRecord = JSON.parse((await readFile(run.historyPath, 'utf8')).split('\n')[0]!) as {
      config: { postgres: string; postgresSettings: Record<string, string> };
    };
    expect(runRecord.config.postgres).toBe('private');
    expect(runRecord.config.postgresSettings).toMatchObject({ autovacuum: 'on', fsync: 'on' });
    const html = await readFile(await writeSoakReport(dir, run.outcome, run.targets), 'utf8');
    for (const chart of ['rate', 'latency', 'size', 'tuples', 'sweeper', 'vacuum'])
      expect(html).toContain(`<div id="${chart}"></div>`);
  }, 120_000);
});
