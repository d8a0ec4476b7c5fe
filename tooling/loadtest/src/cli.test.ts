import { execFile } from 'node:child_process';
import { mkdtemp, writeFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nodeArguments, repoRoot } from '@mcp-tasks/testing';
import { describe, expect, it } from 'vitest';
import { historyBuilder } from '../test/history-builder.js';
import { syntheticRun } from '../test/synthetic-history.js';
import type { HistoryRecord } from './history/records.js';

const run = promisify(execFile);

async function loadtestCheck(records: readonly HistoryRecord[], ...extra: string[]) {
  const dir = await mkdtemp(join(tmpdir(), 'loadtest-cli-'));
  const path = join(dir, 'history.jsonl');
  await writeFile(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const args = [
    ...nodeArguments('tooling/loadtest/src/cli.ts'),
    'check',
    path,
    ...extra.map((e) => e.replace('$DIR', dir)),
  ];
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: repoRoot });
    return { code: 0, stdout, stderr, dir };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr, dir };
  }
}

describe('pnpm loadtest check', () => {
  it('exits 0 on a clean history, prints the summary and writes the report', async () => {
    const result = await loadtestCheck(syntheticRun().records, '--report', '$DIR/report');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('checker passed: 200 acknowledged tasks, no violation');
    expect(result.stdout).toContain('lost (must be 0)');
    expect((await stat(join(result.dir, 'report', 'index.html'))).size).toBeGreaterThan(40_000);
  });

  it('exits 1 on violations, naming each task and the chaos event around it', async () => {
    const history = historyBuilder()
      .create(100, 'task-lost')
      .chaos(300, 'kill-gw-2', 'kill', 'gw-2')
      .final(5_000, 'task-lost', undefined);
    const result = await loadtestCheck(history.records);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'VIOLATION lost-task task task-lost: acknowledged at create, but the final read on gw-1 answered -32602 "Task not found or expired"; around: kill-gw-2 (kill gw-2)',
    );
    expect(result.stderr).toMatch(/checker failed: \d+ violation\(s\)/);
  });

  it('exits 2 with the line at fault on a file that is not a history', async () => {
    const result = await loadtestCheck([{ kind: 'run' } as unknown as HistoryRecord]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/history\.jsonl:1: not a history record: t: /);
  });
});
