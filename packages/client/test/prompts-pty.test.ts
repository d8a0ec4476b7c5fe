import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@mcp-tasks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_COMMAND } from './support/cli.js';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';
import { startStack, TOKENS, type Stack } from './support/stack.js';
import { openTerminal, type Terminal } from './support/tmux.js';

/** The interactive prompts of the real `mcp-tasks` binary, driven through tmux. */
let stack: Stack;
let terminal: Terminal | undefined;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  stack = await startStack('client_pty', { gateways: 1, workers: 1 });
}, 180_000);

afterEach(async () => {
  await terminal?.close();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

afterAll(async () => {
  await stack?.close();
});

const count = (screen: string, text: string) => screen.split(text).length - 1;

describe('mcp-tasks prompts in a terminal', () => {
  it('calls a report, answers both input prompts, and completes with the chosen format', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-pty-'));
    terminal = await openTerminal(
      [...CLI_COMMAND, 'call', 'generate_report', '--arg', 'size=large'],
      { MCP_URL: stack.mcpUrl, MCP_TOKEN: TOKENS.alice, MCP_TASKS_STATE_DIR: stateDir },
      repoRoot,
    );
    const t = terminal;
    // The two requests come in the server's order; answer whichever is on screen.
    for (let answered = 0; answered < 2; answered += 1) {
      const screen = await t.waitFor(new RegExp(`(Your answer[\\s\\S]*){${answered + 1}}`), 60_000);
      const current =
        screen.lastIndexOf('[approve_outline]') > screen.lastIndexOf('[choose_format]')
          ? 'approve_outline'
          : 'choose_format';
      await t.keys('Enter'); // "Answer"
      if (current === 'approve_outline') {
        await t.waitFor(/approved \([yY]\/[nN]\)/);
        await t.type('y');
        await t.keys('Enter');
      } else {
        await t.waitFor(/\? format/);
        await t.keys('Down'); // markdown → html
        await t.keys('Enter');
      }
      await t.waitFor(new RegExp(`(✔[^\\n]*(approved|format)[\\s\\S]*){${answered + 1}}`));
    }
    const screen = await t.waitFor(/EXIT:\d+/, 60_000);
    expect(screen).toContain('EXIT:0');
    expect(screen).toContain('<article><h1>Report (large)</h1>');
    expect(screen).toMatch(/completed — Report ready: 6 sections, html/);
    expect(count(screen, 'Your answer')).toBe(2);
  }, 120_000);

  it('renders every field type of a form and sends exactly the typed answers', async () => {
    server = await startScriptedServer('both');
    server.advance(); // now input_required
    terminal = await openTerminal(
      [...CLI_COMMAND, 'answer', 'tsk_scripted_0001'],
      { MCP_URL: server.url, MCP_TASKS_STATE_DIR: await mkdtemp(join(tmpdir(), 'mcp-tasks-pty-')) },
      repoRoot,
    );
    const t = terminal;
    await t.waitFor(/Tell us about the job\s+\[job\]/);
    await t.waitFor(/Your answer/);
    await t.keys('Enter');
    await t.waitFor(/\? Name/);
    await t.keys('Enter'); // required: an empty answer is refused
    await t.waitFor(/You must provide a value/);
    await t.type('Ada');
    await t.keys('Enter');
    await t.waitFor(/\? Count/);
    await t.type('2.5'); // not an integer
    await t.keys('Enter');
    await t.waitFor(/Enter a whole number/);
    await t.keys('BSpace', 'BSpace', 'BSpace');
    await t.type('3');
    await t.keys('Enter');
    await t.waitFor(/\? Ratio/);
    await t.type('0.5');
    await t.keys('Enter');
    await t.waitFor(/\? Urgent/);
    await t.type('y');
    await t.keys('Enter');
    await t.waitFor(/\? Color/);
    await t.keys('Down'); // red → green
    await t.keys('Enter');
    await t.waitFor(/\? Note \[optional\]/);
    await t.keys('Enter'); // optional: left empty, so omitted
    const screen = await t.waitFor(/EXIT:\d+/);
    expect(screen).toContain('answered job');
    expect(screen).toContain('EXIT:0');
    expect(server.updates).toEqual([
      {
        job: {
          action: 'accept',
          content: { name: 'Ada', count: 3, ratio: 0.5, urgent: true, color: 'green' },
        },
      },
    ]);
  }, 60_000);

  it('sends a decline without content when the user declines', async () => {
    server = await startScriptedServer('both');
    server.advance();
    terminal = await openTerminal(
      [...CLI_COMMAND, 'answer', 'tsk_scripted_0001'],
      { MCP_URL: server.url, MCP_TASKS_STATE_DIR: await mkdtemp(join(tmpdir(), 'mcp-tasks-pty-')) },
      repoRoot,
    );
    await terminal.waitFor(/Your answer/);
    await terminal.keys('Down'); // Answer → Decline
    await terminal.keys('Enter');
    const screen = await terminal.waitFor(/EXIT:\d+/);
    expect(screen).toContain('EXIT:0');
    expect(server.updates).toEqual([{ job: { action: 'decline' } }]);
  }, 60_000);
});
