import { spawn, type ChildProcess } from 'node:child_process';
import { nodeArguments, repoRoot } from '@mcp-tasks/testing';

/** How to start the real `mcp-tasks` binary from source (what `pnpm cli` runs). */
export const CLI_COMMAND = [process.execPath, ...nodeArguments('packages/client/src/cli/main.ts')];

export interface CliRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts the CLI as its own process (no terminal: stdin is closed). */
export function startCli(args: string[], env: Record<string, string>): CliRun {
  const child = spawn(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal === null ? code : null)),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** Resolves once `check()` holds, polling; rejects with `describe()` after the deadline. */
export async function until(
  check: () => boolean | Promise<boolean>,
  describe: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
