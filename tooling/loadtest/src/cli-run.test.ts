import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import {
  nodeArguments,
  postgresBaseUrl,
  processesMarked,
  redisBaseUrl,
  repoRoot,
} from '@mcp-tasks/testing';
import { beforeAll, describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);

/** `pnpm loadtest ARGS` with extra environment; its exit code and output. */
async function loadtest(env: Record<string, string>, ...args: string[]) {
  const argv = nodeArguments('tooling/loadtest/src/cli.ts');
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [...argv, ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('pnpm loadtest (a run)', () => {
  beforeAll(async () => {
    process.env.DATABASE_URL ??= await postgresBaseUrl();
    process.env.REDIS_URL ??= await redisBaseUrl();
  });

  it('uses its own tokens, whatever MCP_TOKENS the shell exports', async () => {
    const result = await loadtest(
      { MCP_TOKENS: 'someone-elses-token:other:someone', LOG_LEVEL: 'warn' },
      ...['--tasks', '4', '--concurrency', '2', '--gateways', '1', '--workers', '1'],
    );
    expect(result.stderr).not.toContain('has no token');
    expect(result.stdout).toContain('checker passed: ');
    expect(result.code).toBe(0);
  }, 150_000);

  it('exits non-zero on a start-up error and leaves none of its processes running', async () => {
    const marker = `LOADTEST_RUN_MARKER=${randomUUID()}`;
    const [name, value] = marker.split('=') as [string, string];
    // A worker refuses this setting at start, after the gateways are already up.
    const result = await loadtest(
      { [name]: value, WORKER_CONCURRENCY: '0' },
      ...['--tasks', '4', '--gateways', '1', '--workers', '1'],
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('WORKER_CONCURRENCY');
    expect(await processesMarked(marker)).toEqual([]);
  }, 150_000);
});
