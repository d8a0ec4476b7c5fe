import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readHistory } from './read-history.js';
import { createHistoryRecorder } from './recorder.js';
import { collectStepLog, parseStepLogLine } from './step-log-collector.js';

const tempFile = async (name: string) =>
  join(await mkdtemp(join(tmpdir(), 'loadtest-history-')), name);

describe('the history recorder', () => {
  it('writes records that read back valid, in order, with monotonic times', async () => {
    const path = await tempFile('history.jsonl');
    const recorder = createHistoryRecorder(path);
    recorder.run({ taskBoundMs: 60_000, seed: 7 });
    for (let i = 0; i < 5_000; i += 1) {
      const op = recorder.request({
        replica: 'gw-1',
        tenant: 'acme',
        method: 'tools/call',
        tool: 'failing_job',
        arguments: {},
      });
      recorder.reply(op, {
        replica: 'gw-1',
        tenant: 'acme',
        method: 'tools/call',
        taskId: `t-${i}`,
        status: 'working',
        httpStatus: 200,
      });
    }
    recorder.chaos({ id: 'c-1', plan: 'kill-worker', action: 'kill', target: 'w-1' });
    recorder.final({ replica: 'gw-1', tenant: 'acme', taskId: 't-1', status: 'completed' });
    await recorder.close();
    const records = await readHistory(path);
    expect(records).toHaveLength(10_003);
    expect(recorder.count()).toBe(10_003);
    expect(records[1]).toMatchObject({ kind: 'request', op: 0, method: 'tools/call' });
    expect(records[2]).toMatchObject({ kind: 'reply', op: 0, taskId: 't-0', status: 'working' });
    const times = records.map((r) => (r.kind === 'step' ? r.startMs : r.t));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('rejects a history line that is not a record, naming the file, line and field', async () => {
    const path = await tempFile('bad.jsonl');
    await writeFile(path, '{"kind":"run","t":1,"taskBoundMs":10}\n{"kind":"reply","t":2,"op":0}\n');
    await expect(readHistory(path)).rejects.toThrow(
      /bad\.jsonl:2: not a history record: replica: /,
    );
  });
});

describe('the step-log collector', () => {
  it('keeps the step lines of a worker log and drops the rest', async () => {
    const path = await tempFile('steps.jsonl');
    const recorder = createHistoryRecorder(path);
    const stdout = new PassThrough();
    const collected = collectStepLog(stdout, recorder);
    stdout.write('{"level":30,"msg":"worker started","workerId":"w-1"}\n');
    stdout.write(
      '{"level":30,"workerId":"w-1","stepLog":"start","taskId":"t-1","epoch":2,"step":"ab","startMs":1000.5,"msg":"step started"}\n',
    );
    stdout.write(
      '{"level":30,"workerId":"w-1","stepLog":"end","taskId":"t-1","epoch":2,"step":"ab","startMs":1000.5,"endMs":1002.25,"outcome":"complete","msg":"step ended"}\n',
    );
    stdout.end('not json at all\n');
    await collected;
    await recorder.close();
    expect(await readHistory(path)).toEqual([
      {
        kind: 'step',
        phase: 'start',
        taskId: 't-1',
        step: 'ab',
        epoch: 2,
        worker: 'w-1',
        startMs: 1000.5,
      },
      {
        kind: 'step',
        phase: 'end',
        taskId: 't-1',
        step: 'ab',
        epoch: 2,
        worker: 'w-1',
        startMs: 1000.5,
        endMs: 1002.25,
        outcome: 'complete',
      },
    ]);
    expect(parseStepLogLine('{"stepLog":"start","taskId":"t"}')).toBeUndefined();
  });
});
