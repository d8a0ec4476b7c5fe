import { Writable } from 'node:stream';
import { pino, type Level } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { buildGateway, useGatewayUnderTest } from './support/harness.js';
import { createReportTask } from './support/rpc.js';

// What a create writes to the log at each level, and what it costs when nothing is written.

const { infra } = useGatewayUnderTest('gw_request_logging');

function capturingLogger(level: Level) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, destination), lines };
}

describe('request logging', () => {
  it('at info, a create logs "task created" with the task, the tool, the request and the caller', async () => {
    const { logger, lines } = capturingLogger('info');
    const { app } = buildGateway(infra, { logger });
    const taskId = await createReportTask(app);
    const created = lines.filter((line) => line.msg === 'task created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      level: 30,
      taskId,
      tool: 'generate_report',
      method: 'tools/call',
      tenant: 'acme',
      principal: 'alice',
      requestId: expect.any(String) as string,
    });
  });

  it('at warn, a create writes nothing and makes no per-request logger', async () => {
    const { logger, lines } = capturingLogger('warn');
    const child = vi.spyOn(logger, 'child');
    const { app } = buildGateway(infra, { logger });
    child.mockClear();
    await createReportTask(app);
    expect(lines).toEqual([]);
    expect(child).not.toHaveBeenCalled();
  });
});
