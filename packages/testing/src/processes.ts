import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from this file's place in packages/testing/src. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Ports handed to child processes come from below the kernel's ephemeral range, where nothing
 * that listens on port 0 (test servers, proxies, the OTLP receiver) or connects out can take one
 * between this check and the child's bind: a port from `listen(0)` could go to another test
 * file's server in that gap, and that file then answered the child's readiness polls.
 */
const FIRST_HANDED_PORT = 20_000;
const PAST_LAST_HANDED_PORT = ephemeralRangeStart();

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/);
    const start = Number(low);
    if (Number.isInteger(start) && start > FIRST_HANDED_PORT + 1_000) return start;
  } catch {
    // Not Linux: fall back to Linux's default; a port is still checked before it is handed out.
  }
  return 32_768;
}

/** A port on 127.0.0.1 free right now, for a child process to listen on. */
export async function freePort(): Promise<number> {
  const span = PAST_LAST_HANDED_PORT - FIRST_HANDED_PORT;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = FIRST_HANDED_PORT + Math.floor(Math.random() * span);
    if (await canListen(port)) return port;
  }
  throw new Error(
    `no free port in ${FIRST_HANDED_PORT}–${PAST_LAST_HANDED_PORT - 1} after 100 tries`,
  );
}

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch {
    return false; // EADDRINUSE: taken
  }
  await new Promise((resolve) => server.close(resolve));
  return true;
}

export interface LaunchedProcess {
  child: ChildProcess;
  /** Everything the process wrote, stdout and stderr interleaved in arrival order. */
  output(): string;
  /**
   * What it wrote to stderr alone. The two pipes are read independently, so a line's place in
   * `output()` relative to the other stream's lines is not reliable; a test about the last
   * thing said on stderr reads it here.
   */
  stderr(): string;
  /** SIGTERM and wait for exit (SIGKILL after graceMs). Resolves with the exit code or signal. */
  stop(graceMs?: number): Promise<number | NodeJS.Signals | null>;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<number | NodeJS.Signals | null>;
}

export interface LaunchOptions {
  /**
   * Entry point, relative to the repository root: a TypeScript file runs from source through tsx;
   * a built `.js` file (e.g. `apps/gateway/dist/main.js`) runs on plain node, as in production.
   */
  entry: string;
  env: Record<string, string>;
  /** Polled until it answers 200, if given. */
  readyUrl?: string;
  readyTimeoutMs?: number;
  /**
   * `pipe` (default): the output is collected for `output()` and `stderr()`. `inherit`: it goes
   * to this process's stdout and stderr as it comes (a command-line run), and is not collected.
   */
  stdio?: 'pipe' | 'inherit';
  /** Extra node flags before the entry, e.g. `--cpu-prof` or `--trace-gc-nvp`. */
  nodeArgs?: readonly string[];
}

/**
 * The entry a started process really runs. With `MCP_TASKS_TEST_BUILD=dist` (CI sets it right
 * after `pnpm build`) a workspace source entry, `<wing>/<package>/src/<path>.ts`, runs as its
 * build `<wing>/<package>/dist/<path>.js` on plain node: what production runs, at about half the
 * start-up CPU of tsx's loader hooks (the suite starts a few hundred processes). Otherwise, and
 * for any other entry, `entry` itself, so a test needs no build step.
 */
export function entryToRun(entry: string): string {
  if (process.env.MCP_TASKS_TEST_BUILD !== 'dist') return entry;
  const source = /^(.*?)((?:apps|packages|tooling|examples)\/[^/]+)\/src\/(.+)\.ts$/.exec(entry);
  if (source === null) return entry;
  const [, root, pkg, path] = source;
  const built = `${root}${pkg}/dist/${path}.js`;
  if (!existsSync(resolvePath(repoRoot, built)))
    throw new Error(`MCP_TASKS_TEST_BUILD=dist, but ${built} does not exist: run pnpm build first`);
  return built;
}

/** Whether a process with this environment loads tool modules written in TypeScript. */
const loadsTypeScriptTools = (env: Record<string, string | undefined>): boolean =>
  (env.MCP_TOOL_MODULES ?? '').split(',').some((module) => /\.[mc]?ts$/.test(module.trim()));

/**
 * Node's arguments for `entry` (see `LaunchOptions.entry` and `entryToRun`) in a process with
 * `env`: `nodeArgs`, then tsx with the workspace's source condition for a `.ts` entry, then the
 * entry. A built entry whose process loads TypeScript tool modules (MCP_TOOL_MODULES, a tool
 * author's source) keeps tsx, without the source condition: the modules then import the same
 * built packages the app does.
 */
export function nodeArguments(
  entry: string,
  nodeArgs: readonly string[] = [],
  env: Record<string, string | undefined> = process.env,
): string[] {
  const run = entryToRun(entry);
  const loader = run.endsWith('.ts')
    ? ['--conditions=@mcp-tasks/source', '--import', 'tsx']
    : loadsTypeScriptTools(env)
      ? ['--import', 'tsx']
      : [];
  return [...nodeArgs, ...loader, run];
}

/**
 * Starts a real Node process, from source (tsx with the workspace's source condition, so
 * multi-process tests need no build step) or from a build. Rejects with the process output if it
 * dies or never becomes ready.
 */
export async function launchProcess(options: LaunchOptions): Promise<LaunchedProcess> {
  const env = { ...process.env, LOG_LEVEL: 'warn', ...options.env };
  const child = spawn(process.execPath, nodeArguments(options.entry, options.nodeArgs, env), {
    cwd: repoRoot,
    env,
    stdio: ['ignore', options.stdio ?? 'pipe', options.stdio ?? 'pipe'],
  });
  let output = '';
  let errors = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    errors += text;
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? code));
  });
  const launched: LaunchedProcess = {
    child,
    output: () => output,
    stderr: () => errors,
    exited,
    kill: (signal) => {
      child.kill(signal);
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  if (options.readyUrl) {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
    let dead = false;
    void exited.then(() => (dead = true));
    for (;;) {
      if (dead) throw new Error(`${options.entry} exited before it was ready:\n${output}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${options.entry} was not ready at ${options.readyUrl}:\n${output}`);
      }
      try {
        const response = await fetch(options.readyUrl);
        if (response.ok) break;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return launched;
}

/**
 * Pids of the processes whose environment holds `marker` (`NAME=value` or a part of it): set it
 * in a command's environment and every process that command starts inherits it, so a test can
 * check that none is left running. Linux only (/proc); the calling process is never listed.
 */
export async function processesMarked(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}
