import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A real pseudo-terminal: tmux runs the command on a private server (its own socket), tests type
 * with send-keys and read the screen with capture-pane — as a person at a terminal would.
 */
export interface Terminal {
  /** The whole pane including scrollback. */
  screen(): Promise<string>;
  keys(...keys: string[]): Promise<void>;
  type(text: string): Promise<void>;
  /** Waits until the screen matches; returns it. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export async function openTerminal(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<Terminal> {
  const socket = `mcp-tasks-test-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => run('tmux', ['-L', socket, ...args]);
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  // The exit status is printed so the test can read it; the pane stays for the final capture.
  const command = `cd ${shellQuote(cwd)} && env ${assignments.join(' ')} ${argv.map(shellQuote).join(' ')}; echo "EXIT:$?"; sleep 600`;
  await tmux('new-session', '-d', '-s', 'cli', '-x', '160', '-y', '50', command);
  await tmux('set-option', '-t', 'cli', 'history-limit', '5000');
  const terminal: Terminal = {
    async screen() {
      const { stdout } = await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'cli');
      return stdout;
    },
    async keys(...keys) {
      await tmux('send-keys', '-t', 'cli', ...keys);
    },
    async type(text) {
      await tmux('send-keys', '-t', 'cli', '-l', text);
    },
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const screen = await terminal.screen();
        if (pattern.test(screen)) return screen;
        if (Date.now() > deadline) {
          throw new Error(`the terminal never showed ${String(pattern)}; it shows:\n${screen}`);
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
  return terminal;
}
