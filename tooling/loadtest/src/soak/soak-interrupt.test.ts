import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  nodeArguments,
  postgresBaseUrl,
  processesMarked,
  redisBaseUrl,
  repoRoot,
} from '@mcp-tasks/testing';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Ctrl-C in a terminal signals the whole foreground process group, and tsx passes the signal on
 * to its child as well: the soak sees SIGINT more than once. It must still stop its gateway,
 * worker and Postgres server and write what it sampled, not die half-way and leave them running.
 */
describe('pnpm loadtest soak, interrupted', () => {
  beforeAll(async () => {
    process.env.DATABASE_URL ??= await postgresBaseUrl();
    process.env.REDIS_URL ??= await redisBaseUrl();
  });

  it('stops every process it started and reports, when SIGINT reaches it twice', async () => {
    const marker = randomUUID();
    const dir = await mkdtemp(join(tmpdir(), 'soak-interrupt-'));
    const child = spawn(
      process.execPath,
      [
        ...nodeArguments('tooling/loadtest/src/cli.ts'),
        ...['soak', '--duration', '10m', '--rate', '4', '--window', '3'],
        ...['--ttl', '5', '--retention', '12', '--report', dir],
      ],
      {
        cwd: repoRoot,
        env: { ...process.env, SOAK_INTERRUPT_MARKER: marker, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + 90_000;
    while (!/\[3 s\]/.test(stdout) && Date.now() < deadline) await sleep(200);
    expect(stdout).toMatch(/\[3 s\]/);
    expect((await processesMarked(marker)).length).toBeGreaterThan(1);

    // As a terminal does: the group (the CLI and everything it started), then the CLI again.
    const signalledAt = Date.now();
    process.kill(-child.pid!, 'SIGINT');
    await sleep(100);
    child.kill('SIGINT');
    const code = await exited;
    // The lifecycles in flight stop at their next look; they do not wait out their tasks' bound
    // (ttl + 60 s) against a stack the Ctrl-C stopped as well.
    expect(Date.now() - signalledAt).toBeLessThan(15_000);

    expect(stdout).toContain('soak: interrupted; stopping the load and reporting what was sampled');
    expect(stdout).toContain(`report: ${join(dir, 'soak.html')}`);
    expect(code).toBe(1);
    expect(await processesMarked(marker)).toEqual([]);
    // What the interrupt cut short is counted as such, not as lost tasks or violations.
    expect(stdout).toMatch(/interrupted: \d+ task\(s\) cut short/);
    expect(stdout).toContain('met    lost tasks: 0 (want 0)');
    expect(stdout).toContain('met    checker violations: 0 (want 0)');
  }, 240_000);
});
