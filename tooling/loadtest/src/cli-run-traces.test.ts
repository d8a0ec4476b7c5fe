import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  type CollectedSpan,
  nodeArguments,
  type OtlpReceiver,
  postgresBaseUrl,
  redisBaseUrl,
  repoRoot,
  startOtlpReceiver,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);
const SERVER = 2;
const CLIENT = 3;

/** The first row of the summary's "slowest task" table: task id and trace id. */
function slowestRow(stdout: string): { taskId: string; traceId: string } {
  const lines = stdout.split('\n');
  const header = lines.findIndex((line) => line.includes('slowest task'));
  expect(header, stdout).toBeGreaterThanOrEqual(0);
  const row = lines.slice(header + 1).find((line) => /[0-9a-f]{32}/.test(line));
  const match = /(tsk_[\w-]+).*\b([0-9a-f]{32})\b/.exec(row ?? '');
  expect(match, stdout).not.toBeNull();
  return { taskId: match![1]!, traceId: match![2]! };
}

describe('pnpm loadtest with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    process.env.DATABASE_URL ??= await postgresBaseUrl();
    process.env.REDIS_URL ??= await redisBaseUrl();
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver?.close());

  it("reports the slowest tasks' trace ids, each one trace through client, gateway and worker", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loadtest-traces-'));
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        ...nodeArguments('tooling/loadtest/src/cli.ts'),
        ...['--tasks', '6', '--concurrency', '3', '--gateways', '1', '--workers', '1'],
        ...['--report', dir],
      ],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '200',
          LOG_LEVEL: 'warn',
        },
        timeout: 120_000,
      },
    );
    expect(stdout).toContain('checker passed: ');
    const { taskId, traceId } = slowestRow(stdout);
    expect(await readFile(join(dir, 'index.html'), 'utf8')).toContain(`<code>${traceId}</code>`);
    // Every process exported before it exited; the worker's last batch may trail by a beat.
    const inTrace = (spans: readonly CollectedSpan[]) => spans.filter((s) => s.traceId === traceId);
    const spans = inTrace(
      await receiver.waitFor((all) =>
        inTrace(all).some((s) => s.serviceName === 'mcp-tasks-worker' && s.name === 'task.attempt'),
      ),
    );
    const client = spans.filter((s) => s.name === 'loadtest.task');
    expect(client).toHaveLength(1);
    expect(client[0]).toMatchObject({
      serviceName: 'mcp-tasks-loadtest',
      kind: CLIENT,
      parentSpanId: '',
    });
    expect(client[0]!.attributes['mcp_tasks.task.id']).toBe(taskId);
    const create = spans.filter(
      (s) => s.serviceName === 'mcp-tasks-gateway' && s.name.startsWith('tools/call '),
    );
    expect(create).toHaveLength(1);
    expect(create[0]).toMatchObject({
      kind: SERVER,
      parentSpanId: client[0]!.spanId,
    });
    expect(create[0]!.attributes['mcp_tasks.task.id']).toBe(taskId);
    const attempts = spans.filter((s) => s.name === 'task.attempt');
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({
        serviceName: 'mcp-tasks-worker',
        parentSpanId: create[0]!.spanId,
      });
      expect(attempt.attributes['mcp_tasks.task.id']).toBe(taskId);
    }
  }, 150_000);
});
