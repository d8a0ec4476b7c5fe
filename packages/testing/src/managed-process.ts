import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { createInterface } from 'node:readline';

export type ProcessRole = 'gateway' | 'worker' | 'proxy';
export type ExitStatus = number | NodeJS.Signals | null;

export interface LogLine {
  name: string;
  role: ProcessRole | 'stack';
  stream: 'stdout' | 'stderr';
  text: string;
}
export type LogSink = (line: LogLine) => void;

export interface ProcessSpec {
  name: string;
  role: ProcessRole;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Polled until it answers 200 after each start. */
  readyUrl: string;
  /**
   * The signal that asks for a graceful exit: SIGTERM for everything the stack starts (nginx's
   * graceful SIGQUIT would wait for open listen streams; SIGTERM closes them).
   */
  stopSignal: NodeJS.Signals;
  url?: string;
  workerId?: string;
}

const TAIL_LINES = 40;

/**
 * One child process the stack owns, controllable from outside: kill it with any signal,
 * start it again on the same port and identity, or stop it gracefully (bounded, then SIGKILL).
 * It runs on exactly the environment of its spec (nothing inherited, no LOG_LEVEL default), and
 * every line it writes goes to the sink, the last 40 kept for error messages (`recentOutput()`).
 * `managedGateway` and `managedWorker` (topology.ts) make the apps' ones.
 */
export class ManagedProcess {
  readonly name: string;
  readonly role: ProcessRole;
  readonly url: string | undefined;
  /** Its /healthz (a worker's metrics port serves /metrics beside it). */
  readonly readyUrl: string;
  readonly workerId: string | undefined;
  private child: ChildProcess | undefined;
  private exit: Promise<ExitStatus> = Promise.resolve(null);
  private readonly tail: string[] = [];

  constructor(
    private readonly spec: ProcessSpec,
    private readonly sink: LogSink,
  ) {
    this.name = spec.name;
    this.role = spec.role;
    this.url = spec.url;
    this.readyUrl = spec.readyUrl;
    this.workerId = spec.workerId;
  }

  /** The current child's pid; undefined before the first start. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return (
      this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
    );
  }

  /** Resolves when the current child exits (at once when none runs). */
  exited(): Promise<ExitStatus> {
    return this.exit;
  }

  /** The last lines the process wrote, for error messages. */
  recentOutput(): string {
    return this.tail.join('\n');
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.running) this.child?.kill(signal);
  }

  /** Spawns the process (no-op when running) and waits until its ready URL answers 200. */
  async start(readyTimeoutMs = 60_000): Promise<void> {
    if (this.running) return;
    const child = spawn(this.spec.command, this.spec.args, {
      cwd: this.spec.cwd,
      env: this.spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve(signal ?? code));
      child.once('error', (error) => {
        this.record('stderr', `failed to spawn ${this.spec.command}: ${error.message}`);
        resolve(null);
      });
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: child[stream] }).on('line', (text) => this.record(stream, text));
    }
    await this.waitReady(readyTimeoutMs);
  }

  /** Graceful stop (if running), then start again. */
  async restart(graceMs?: number): Promise<void> {
    await this.stop(graceMs);
    await this.start();
  }

  /** Sends the stop signal and waits; SIGKILL after `graceMs`. */
  async stop(graceMs = 25_000): Promise<ExitStatus> {
    if (!this.running) return this.exit;
    this.kill(this.spec.stopSignal);
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    try {
      return await this.exit;
    } finally {
      clearTimeout(timer);
    }
  }

  private record(stream: LogLine['stream'], text: string): void {
    this.tail.push(text);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.sink({ name: this.name, role: this.role, stream, text });
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let dead = false;
    void this.exit.then(() => (dead = true));
    for (;;) {
      if (dead) {
        throw new Error(`${this.name} exited before it was ready:\n${this.recentOutput()}`);
      }
      if (Date.now() > deadline) {
        this.kill('SIGKILL');
        throw new Error(
          `${this.name} was not ready at ${this.spec.readyUrl} within ${timeoutMs} ms`,
        );
      }
      try {
        const response = await fetch(this.spec.readyUrl, { signal: AbortSignal.timeout(2_000) });
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await delay(100);
    }
  }
}
