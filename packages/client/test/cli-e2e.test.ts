import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.js';
import { runCli, startCli, until } from './support/cli.js';
import { CONSOLE_TOKEN, startStack, TOKENS, type Stack } from './support/stack.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

/**
 * The `mcp-tasks` binary against real processes: two gateways and two workers on one Postgres and
 * one Redis prefix, and a TCP load balancer in front of the gateways for the failover case.
 */
let stack: Stack;
let proxy: TcpProxy;

beforeAll(async () => {
  stack = await startStack('client_cli', { gateways: 2, workers: 2 });
  proxy = await startTcpProxy(stack.gateways.map((g) => Number(new URL(g.url).port)));
}, 180_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.close();
});

async function freshEnv(url = stack.mcpUrl): Promise<Record<string, string>> {
  return {
    MCP_URL: url,
    MCP_TOKEN: TOKENS.alice,
    MCP_TASKS_STATE_DIR: await mkdtemp(join(tmpdir(), 'mcp-tasks-state-')),
  };
}

async function storedTaskIds(dir: string): Promise<string[]> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const ids: string[] = [];
  for (const file of files.filter((f) => f.endsWith('.json'))) {
    const parsed = JSON.parse(await readFile(join(dir, file), 'utf8')) as { tasks: object };
    ids.push(...Object.keys(parsed.tasks));
  }
  return ids;
}

describe('mcp-tasks against real gateway and worker processes', () => {
  it("prints a finished task's history from the console with `history`", async () => {
    const env = await freshEnv();
    // Two steps: a checkpoint between them, each step's start recorded with the write before it.
    const call = await runCli(['call', 'slow_compute', '--arg', 'seconds=2'], env);
    expect(call.code).toBe(0);
    const taskId = /task (\S+)/.exec(call.stderr)?.[1] ?? '';
    const history = await runCli(['history', taskId], { ...env, MCP_CONSOLE_TOKEN: CONSOLE_TOKEN });
    expect(history.code).toBe(0);
    const kinds = history.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[1]);
    // `enqueued` (the wake-up's stamp) may land before or after the claim: not part of the order.
    expect(kinds.filter((kind) => kind !== 'enqueued')).toEqual([
      'created',
      'claimed',
      'step_started',
      'checkpoint',
      'step_started',
      'completed',
    ]);
    expect(history.stdout).toMatch(/ step_started \{"step":2,"worker":"[^"]+"\}\n/);
    const refused = await runCli(['history', taskId], { ...env, MCP_CONSOLE_TOKEN: TOKENS.alice });
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('That token is not an operator token of this console.');
  });

  it('finishes a task after the client was killed mid-wait and restarted with `resume`', async () => {
    const env = await freshEnv();
    const first = startCli(['call', 'slow_compute', '--arg', 'seconds=4'], env);
    await until(
      async () =>
        (await storedTaskIds(env.MCP_TASKS_STATE_DIR!)).length === 1 &&
        /working/.test(first.stderr()),
      () => `no stored handle; stderr: ${first.stderr()}`,
    );
    const [taskId] = await storedTaskIds(env.MCP_TASKS_STATE_DIR!);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();

    const resumed = await runCli(['resume'], env);
    expect(resumed.stderr).toContain(`resuming ${taskId}`);
    expect(resumed.stdout).toContain('Computed');
    expect(resumed.code).toBe(0);
    expect(await storedTaskIds(env.MCP_TASKS_STATE_DIR!)).toEqual([]);

    const again = await runCli(['resume'], env);
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expect(again.stderr).toContain('no unfinished tasks');
  }, 60_000);

  it('ends `watch` with exit code 3 when another client cancels the task', async () => {
    const env = await freshEnv();
    const created = await runCli(['call', 'slow_compute', '--arg', 'seconds=60', '--detach'], env);
    expect(created.code).toBe(0);
    const taskId = created.stdout.trim();
    expect(taskId).toMatch(/^tsk_/);
    const watch = startCli(['watch', taskId], env);
    await until(
      () => /Computing/.test(watch.stderr()),
      () => watch.stderr(),
    );

    // Another client: the library, on the other replica.
    const other = createClient({ url: `${stack.gateways[1]!.url}/mcp`, token: TOKENS.alice });
    await other.task(taskId).cancel();

    expect(await watch.exited).toBe(3);
    expect(watch.stderr()).toContain(`${taskId} cancelled`);
  }, 60_000);

  it('reconnects `watch` through the load balancer when the gateway holding its stream is killed', async () => {
    const env = await freshEnv(`${proxy.url}/mcp`);
    const created = await runCli(['call', 'slow_compute', '--arg', 'seconds=8', '--detach'], {
      ...env,
      MCP_URL: stack.mcpUrl,
    });
    const taskId = created.stdout.trim();
    const watch = startCli(['watch', taskId], env);
    await until(
      () => /Computing: \d/.test(watch.stderr()),
      () => watch.stderr(),
    );
    // The watch holds exactly one connection through the proxy: its listen stream.
    const holding = [...proxy.open()].filter(([, n]) => n > 0);
    expect(holding).toHaveLength(1);
    const [port, count] = holding[0]!;
    expect(count).toBe(1);
    const victim = stack.gateways.find((g) => Number(new URL(g.url).port) === port)!;
    const survivor = stack.gateways.find((g) => g !== victim)!;
    victim.process.kill('SIGKILL');
    await victim.process.exited;

    expect(await watch.exited).toBe(0);
    expect(watch.stderr()).toContain(`${taskId} completed`);
    // After the kill, every new connection went to the surviving replica, and it served a listen.
    const afterKill = proxy.history.slice(proxy.history.lastIndexOf(port) + 1);
    expect(afterKill.length).toBeGreaterThan(0);
    expect(new Set(afterKill)).toEqual(new Set([Number(new URL(survivor.url).port)]));
    const metrics = await (await fetch(`${survivor.url}/metrics`)).text();
    expect(metrics).toMatch(/mcp_requests_total\{[^}]*method="subscriptions\/listen"[^}]*\} [1-9]/);
  }, 90_000);
});
