import { createTask, createTaskService, type EventMark } from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEventTail } from '../src/console/event-tail.js';
import { useGatewayUnderTest } from './support/harness.js';

const { infra } = useGatewayUnderTest('gateway_console_tail');

function task(tenant: string) {
  return {
    id: newTaskId(),
    owner: { tenant, principal: 'p' },
    operation: { method: 'tools/call' as const, toolName: 'tail_tool', arguments: {} },
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    statusMessage: null,
  };
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the console event tail', () => {
  it('delivers each change once with its tenant, also one whose transaction committed after a later one', async () => {
    const service = createTaskService({ db: infra.db, wakeUpQueue: infra.queue });
    const tail = createEventTail({
      console: service.console,
      intervalMs: 50,
      logger: pino({ level: 'silent' }),
    });
    const seen: EventMark[] = [];
    const unsubscribe = tail.subscribe((marks) => seen.push(...marks));
    await new Promise((resolve) => setTimeout(resolve, 300));

    // A transaction takes its event id first and commits last.
    const slow = new pg.Client({ connectionString: infra.database.connectionString });
    await slow.connect();
    const early = task('acme');
    await slow.query('BEGIN');
    await slow.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments) VALUES ($1, 'acme', 'p', 'tools/call', 'tail_tool', '{}')`,
      [early.id],
    );
    const late = (await createTask(infra.db, task('globex'))).task;
    await until(() => seen.some((mark) => mark.taskId === late.id));
    await slow.query('COMMIT');
    await slow.end();
    await until(() => seen.some((mark) => mark.taskId === early.id));
    await new Promise((resolve) => setTimeout(resolve, 300));
    unsubscribe();
    tail.close();

    const created = seen.filter((mark) => [early.id, late.id].includes(mark.taskId));
    expect(created.map((mark) => [mark.taskId, mark.tenant])).toEqual([
      [late.id, 'globex'],
      [early.id, 'acme'],
    ]);
    expect(created[1]!.id).toBeLessThan(created[0]!.id);
  });
});
