import { describe, expect, it } from 'vitest';
import { FAILING_JOB_RESULT, historyBuilder } from '../../test/history-builder.js';
import type { HistoryRecord } from '../history/records.js';
import { checkHistory } from './checker.js';

const kindsAndIds = (result: ReturnType<typeof checkHistory>) =>
  result.violations.map((v) => ({ kind: v.kind, taskIds: v.taskIds }));

describe('the history checker', () => {
  it('passes a clean history: tasks created, polled, completed, probed, read back', () => {
    const history = historyBuilder()
      .cleanTask(100, 'task-a', 'w-1')
      .cleanTask(120, 'task-b', 'w-2')
      .get(110, 'task-a', 'working')
      .probeAnsweredCorrectly(130, 'task-a', 'globex');
    const result = checkHistory(history.records);
    expect(result.violations).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.acknowledgedTasks).toBe(2);
    expect(result.reExecutions).toEqual([]);
  });

  it('fails on a lost task, naming it and the chaos event around it', () => {
    const history = historyBuilder()
      .cleanTask(100, 'task-ok')
      .create(200, 'task-lost')
      .chaos(300, 'chaos-1', 'kill', 'w-1')
      .final(5_000, 'task-lost', undefined);
    const result = checkHistory(history.records);
    expect(result.ok).toBe(false);
    const lost = result.violations.filter((v) => v.kind === 'lost-task');
    expect(lost.map((v) => v.taskIds)).toEqual([['task-lost'], ['task-lost']]);
    expect(lost[0]!.message).toContain('-32602');
    expect(lost[0]!.chaos.map((e) => e.id)).toEqual(['chaos-1']);
    expect(kindsAndIds(result)).toContainEqual({
      kind: 'not-terminal-in-bound',
      taskIds: ['task-lost'],
    });
  });

  it('fails on a task its owner is told is unknown after the create was acknowledged', () => {
    const history = historyBuilder()
      .create(100, 'task-vanished')
      .get(200, 'task-vanished', 'working')
      .get(300, 'task-vanished', 'working', {}, 'gw-2');
    // Replace the second read's status with the unknown-id error, as a replica that lost it would.
    const reply = history.records.at(-1) as Record<string, unknown>;
    delete reply.status;
    Object.assign(reply, { errorCode: -32602, errorMessage: 'Task not found or expired' });
    history.get(400, 'task-vanished', 'completed', { result: FAILING_JOB_RESULT });
    history.final(5_000, 'task-vanished', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([{ kind: 'lost-task', taskIds: ['task-vanished'] }]);
    expect(result.violations[0]!.message).toBe(
      'acknowledged, then tasks/get on gw-2 answered -32602 "Task not found or expired"',
    );
  });

  it('allows a run with retention a miss once the ttl and retention have passed, and not before', () => {
    const missAt = (t: number) => {
      const history = historyBuilder()
        .create(100, 'task-retained')
        .get(200, 'task-retained', 'completed', { result: FAILING_JOB_RESULT })
        .final(300, 'task-retained', 'completed', { result: FAILING_JOB_RESULT })
        .get(t, 'task-retained', 'working', {}, 'gw-2');
      const reply = history.records.at(-1) as Record<string, unknown>;
      delete reply.status;
      Object.assign(reply, { errorCode: -32602, errorMessage: 'Task not found or expired' });
      return history.records.map((r) =>
        r.kind === 'run' ? { ...r, config: { ttlMs: 1_000, retentionMs: 2_000 } } : r,
      );
    };
    // Created no sooner than its create was sent (t 100): deletable from t 3,100 on.
    expect(kindsAndIds(checkHistory(missAt(3_000)))).toEqual([
      { kind: 'lost-task', taskIds: ['task-retained'] },
    ]);
    expect(checkHistory(missAt(3_200)).violations).toEqual([]);
  });

  it('fails on a task never read back at the end', () => {
    const result = checkHistory(historyBuilder().create(100, 'task-unread').records);
    expect(kindsAndIds(result)).toContainEqual({ kind: 'lost-task', taskIds: ['task-unread'] });
  });

  describe('a run interrupted (Ctrl-C)', () => {
    it('counts a task still followed at the interrupt as interrupted, not lost or late', () => {
      // task-cut was never read back, task-dark's final reads found the stack gone.
      const history = historyBuilder(10_000)
        .cleanTask(100, 'task-done')
        .create(6_000, 'task-cut')
        .get(6_500, 'task-cut', 'working')
        .create(6_200, 'task-dark')
        .interrupted(7_000, 2)
        .final(7_500, 'task-dark', undefined, {
          errorCode: undefined,
          errorMessage: 'fetch failed',
        });
      const result = checkHistory(history.records);
      expect(result.violations).toEqual([]);
      expect(result.interruptedTasks).toBe(2);
      expect(result.acknowledgedTasks).toBe(3);
      // Without the interrupt the same history is two lost tasks, never seen terminal.
      const plain = checkHistory(history.records.filter((r) => r.kind !== 'interrupted'));
      expect(new Set(plain.violations.map((v) => v.kind))).toEqual(
        new Set(['lost-task', 'not-terminal-in-bound']),
      );
      expect(plain.interruptedTasks).toBe(0);
    });

    it('still fails a task whose bound passed before the interrupt, or the service said is unknown', () => {
      const history = historyBuilder(1_000)
        .create(100, 'task-overdue')
        .get(500, 'task-overdue', 'working')
        .create(4_000, 'task-unknown')
        .interrupted(5_000)
        .final(5_500, 'task-unknown', undefined);
      expect(kindsAndIds(checkHistory(history.records))).toEqual([
        { kind: 'not-terminal-in-bound', taskIds: ['task-overdue'] },
        { kind: 'lost-task', taskIds: ['task-unknown'] },
        { kind: 'lost-task', taskIds: ['task-unknown'] },
      ]);
    });
  });

  it('fails on a task that leaves a terminal state, naming both replicas', () => {
    const history = historyBuilder()
      .create(100, 'task-flip')
      .get(200, 'task-flip', 'completed', { result: FAILING_JOB_RESULT }, 'gw-1')
      .get(300, 'task-flip', 'working', {}, 'gw-2')
      .final(5_000, 'task-flip', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([{ kind: 'terminal-state-left', taskIds: ['task-flip'] }]);
    expect(result.violations[0]!.message).toMatch(/completed on gw-1, then working on gw-2/);
  });

  it('checks the sequence a subscription stream delivered: a terminal task pushed as working again fails', () => {
    const history = historyBuilder()
      .create(100, 'task-pushed')
      .stream(150, 'task-pushed', [
        [300, 'working'],
        [900, 'completed', { result: FAILING_JOB_RESULT }],
        [950, 'working'],
      ])
      .final(5_000, 'task-pushed', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([
      { kind: 'terminal-state-left', taskIds: ['task-pushed'] },
    ]);
    expect(result.violations[0]!.message).toMatch(/completed on gw-2, then working on gw-2/);
  });

  it('passes a stream that delivered a legal sequence, and counts its terminal status in the bound', () => {
    const history = historyBuilder(1_000)
      .create(100, 'task-streamed')
      .stream(150, 'task-streamed', [
        [300, 'working'],
        [400, 'input_required', { inputKeys: ['k1'] }],
        [700, 'working'],
        [900, 'completed', { result: FAILING_JOB_RESULT }],
      ])
      .answer(500, 'task-streamed', ['k1'])
      .final(5_000, 'task-streamed', 'completed', { result: FAILING_JOB_RESULT });
    expect(checkHistory(history.records).violations).toEqual([]);
  });

  it('does not order the replies of overlapping requests', () => {
    // The second request was sent before the first reply came: either order is possible.
    const history = historyBuilder().create(100, 'task-c');
    history.records.push(
      {
        kind: 'request',
        t: 200,
        op: 90,
        replica: 'gw-1',
        tenant: 'acme',
        method: 'tasks/get',
        taskId: 'task-c',
      },
      {
        kind: 'request',
        t: 201,
        op: 91,
        replica: 'gw-2',
        tenant: 'acme',
        method: 'tasks/get',
        taskId: 'task-c',
      },
      {
        kind: 'reply',
        t: 205,
        op: 91,
        replica: 'gw-2',
        tenant: 'acme',
        method: 'tasks/get',
        taskId: 'task-c',
        status: 'completed',
        result: FAILING_JOB_RESULT,
      },
      {
        kind: 'reply',
        t: 210,
        op: 90,
        replica: 'gw-1',
        tenant: 'acme',
        method: 'tasks/get',
        taskId: 'task-c',
        status: 'working',
      },
    );
    history.final(5_000, 'task-c', 'completed', { result: FAILING_JOB_RESULT });
    expect(checkHistory(history.records).violations).toEqual([]);
  });

  it('fails on an input key asked again in a later round', () => {
    const history = historyBuilder()
      .create(100, 'task-keys', 'acme', 'custom_tool')
      .get(200, 'task-keys', 'input_required', { inputKeys: ['approve'] })
      .answer(250, 'task-keys', ['approve'])
      .get(300, 'task-keys', 'working')
      .get(400, 'task-keys', 'input_required', { inputKeys: ['approve'] })
      .get(500, 'task-keys', 'completed')
      .final(5_000, 'task-keys', 'completed');
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([
      { kind: 'input-key-reused', taskIds: ['task-keys'] },
      { kind: 'answer-not-applied', taskIds: ['task-keys'] },
    ]);
    expect(result.violations[0]!.message).toContain(
      '"approve" asked in round 1 and again in round 2',
    );
  });

  it('allows a run on lagging replicas its recorded staleness, and not a read past it', () => {
    const stale = (readT: number) =>
      historyBuilder()
        .create(100, 'task-lag', 'acme', 'custom_tool')
        .get(200, 'task-lag', 'input_required', { inputKeys: ['a'] })
        .answer(250, 'task-lag', ['a'])
        .get(readT, 'task-lag', 'input_required', { inputKeys: ['a'] })
        .get(readT + 100, 'task-lag', 'completed')
        .final(20_000, 'task-lag', 'completed').records;
    const withBound = (records: HistoryRecord[]): HistoryRecord[] =>
      records.map((r) => (r.kind === 'run' ? { ...r, config: { staleReadMs: 1_000 } } : r));
    // The answer's reply came back at 250 + the builder's round trip; a read 500 ms later is stale.
    expect(checkHistory(withBound(stale(800))).violations).toEqual([]);
    expect(kindsAndIds(checkHistory(stale(800)))).toEqual([
      { kind: 'answer-not-applied', taskIds: ['task-lag'] },
    ]);
    expect(kindsAndIds(checkHistory(withBound(stale(2_000))))).toEqual([
      { kind: 'answer-not-applied', taskIds: ['task-lag'] },
    ]);
  });

  it('allows a round split or repeated by reads on lagging replicas within their staleness, and not past it', () => {
    const withBound = (records: HistoryRecord[]): HistoryRecord[] =>
      records.map((r) => (r.kind === 'run' ? { ...r, config: { staleReadMs: 1_000 } } : r));
    // A stale `working` (from before the input request) inside a round after a partial answer.
    const split = (againT: number) =>
      historyBuilder()
        .create(100, 'task-split', 'acme', 'custom_tool')
        .get(200, 'task-split', 'input_required', { inputKeys: ['a', 'b'] })
        .answer(250, 'task-split', ['a'])
        .get(300, 'task-split', 'working')
        .get(againT, 'task-split', 'input_required', { inputKeys: ['b'] })
        .answer(againT + 50, 'task-split', ['b'])
        .get(againT + 100, 'task-split', 'completed')
        .final(20_000, 'task-split', 'completed').records;
    expect(checkHistory(withBound(split(800))).violations).toEqual([]);
    expect(kindsAndIds(checkHistory(split(800)))).toEqual([
      { kind: 'input-key-reused', taskIds: ['task-split'] },
    ]);
    expect(kindsAndIds(checkHistory(withBound(split(2_000))))).toEqual([
      { kind: 'input-key-reused', taskIds: ['task-split'] },
    ]);
    // A stale `input_required` read after the answer and a fresh `working`.
    const repeat = historyBuilder()
      .create(100, 'task-repeat', 'acme', 'custom_tool')
      .get(200, 'task-repeat', 'input_required', { inputKeys: ['a'] })
      .answer(250, 'task-repeat', ['a'])
      .get(300, 'task-repeat', 'working')
      .get(600, 'task-repeat', 'input_required', { inputKeys: ['a'] })
      .get(700, 'task-repeat', 'completed')
      .final(20_000, 'task-repeat', 'completed').records;
    expect(checkHistory(withBound(repeat)).violations).toEqual([]);
  });

  it('accepts a partial answer: the other key stays pending in the same round', () => {
    const history = historyBuilder()
      .create(100, 'task-partial', 'acme', 'custom_tool')
      .get(200, 'task-partial', 'input_required', { inputKeys: ['a', 'b'] })
      .answer(250, 'task-partial', ['a'])
      .get(300, 'task-partial', 'input_required', { inputKeys: ['b'] })
      .answer(350, 'task-partial', ['b'])
      .answer(360, 'task-partial', ['b'])
      .get(400, 'task-partial', 'completed')
      .final(5_000, 'task-partial', 'completed');
    expect(checkHistory(history.records).violations).toEqual([]);
  });

  it('fails on a cross-tenant read, and on a probe answered with any other error', () => {
    const history = historyBuilder()
      .cleanTask(100, 'task-secret')
      .cleanTask(100, 'task-other')
      .probe(200, 'task-secret', 'globex', { status: 'working' })
      .probe(210, 'task-other', 'globex', {
        errorCode: -32602,
        errorMessage: 'Task belongs to another tenant',
      })
      // A transport error says nothing about isolation.
      .probe(220, 'task-other', 'globex', { errorMessage: 'ECONNRESET', httpStatus: undefined })
      // Nor does a server that cannot answer (its database restarting)...
      .probe(230, 'task-other', 'globex', { errorCode: -32603, errorMessage: 'Internal error' })
      // ...but any other message with that code is not the unknown-id error.
      .probe(240, 'task-secret', 'globex', { errorCode: -32603, errorMessage: "Task is acme's" });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([
      { kind: 'cross-tenant-read', taskIds: ['task-secret'] },
      { kind: 'cross-tenant-read', taskIds: ['task-other'] },
      { kind: 'cross-tenant-read', taskIds: ['task-secret'] },
    ]);
    expect(result.violations[0]!.message).toContain(
      'tenant globex tasks/get on gw-1 for a task of acme got status working',
    );
  });

  it('fails on two overlapping step executions, naming the task, the workers and the kill', () => {
    const history = historyBuilder()
      .create(100, 'task-twice')
      .step('task-twice', 'w-1', 1, 150, 400)
      .chaos(200, 'pause-1', 'pause', 'w-1')
      .step('task-twice', 'w-2', 2, 300, 350)
      .get(500, 'task-twice', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-twice', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([{ kind: 'overlapping-steps', taskIds: ['task-twice'] }]);
    expect(result.violations[0]!.message).toMatch(
      /on w-1 \(epoch 1\) and step s0 on w-2 \(epoch 2\)/,
    );
    expect(result.violations[0]!.chaos.map((e) => e.id)).toEqual(['pause-1']);
    expect(result.reExecutions).toEqual([{ taskId: 'task-twice', step: 's0', epochs: [1, 2] }]);
  });

  it('sets a step that ran past its lease deadline aside as a stale tail, not an overlap', () => {
    // w-1 froze mid-step; its lease deadline passed at 450; w-2 took over at 500 and finished; w-1,
    // thawed at 1 000, logged its step lease-expired at 1 010 and wrote nothing of it.
    const history = historyBuilder()
      .create(100, 'task-frozen')
      .step('task-frozen', 'w-1', 1, 150, 1_010, 's0', {
        outcome: 'lease-expired',
        leaseDeadlineMs: 450,
      })
      .chaos(200, 'pause-1', 'pause', 'w-1')
      .step('task-frozen', 'w-2', 2, 500, 900, 's0', { leaseDeadlineMs: 2_100 })
      .chaos(1_000, 'resume-1', 'resume', 'w-1')
      .get(1_300, 'task-frozen', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-frozen', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(result.violations).toEqual([]);
    expect(result.reExecutions).toEqual([{ taskId: 'task-frozen', step: 's0', epochs: [1, 2] }]);
    expect(result.staleTails).toEqual([
      {
        taskId: 'task-frozen',
        step: 's0',
        epoch: 1,
        worker: 'w-1',
        startMs: 150,
        leaseDeadlineMs: 450,
        endMs: 1_010,
        outcome: 'lease-expired',
        takenOver: true,
      },
    ]);
  });

  it('fails when two executions overlap before the lease deadline of the first', () => {
    const history = historyBuilder()
      .create(100, 'task-stale')
      .step('task-stale', 'w-1', 1, 150, 1_400, 's0', {
        outcome: 'lease-expired',
        leaseDeadlineMs: 700,
      })
      .chaos(200, 'pause-1', 'pause', 'w-1')
      .step('task-stale', 'w-2', 2, 500, 1_200)
      .chaos(1_000, 'resume-1', 'resume', 'w-1')
      .get(1_500, 'task-stale', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-stale', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([{ kind: 'overlapping-steps', taskIds: ['task-stale'] }]);
    expect(result.violations[0]!.message).toContain(
      'ran at the same time for 200 ms within their leases',
    );
    expect(result.violations[0]!.chaos.map((e) => e.id)).toEqual(['pause-1', 'resume-1']);
  });

  it('fails when a step past its lease deadline was not stopped there (logged as a normal end)', () => {
    const history = historyBuilder()
      .create(100, 'task-ran-on')
      .step('task-ran-on', 'w-1', 1, 150, 1_010, 's0', {
        outcome: 'continue',
        leaseDeadlineMs: 450,
      })
      .step('task-ran-on', 'w-2', 2, 500, 900)
      .get(1_300, 'task-ran-on', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-ran-on', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([
      { kind: 'stale-step-continued', taskIds: ['task-ran-on'] },
    ]);
    expect(result.violations[0]!.message).toBe(
      'step s0 on w-1 (epoch 1) ran 560 ms past its lease deadline and logged its outcome as "continue", not lease-expired',
    );
  });

  it('fails when a worker starts another step of an epoch whose lease deadline passed', () => {
    const history = historyBuilder()
      .create(100, 'task-went-on')
      .step('task-went-on', 'w-1', 1, 150, 1_010, 's0', {
        outcome: 'lease-expired',
        leaseDeadlineMs: 450,
      })
      .step('task-went-on', 'w-1', 1, 1_020, 1_100, 's1', { leaseDeadlineMs: 1_500 })
      .get(1_300, 'task-went-on', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-went-on', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([
      { kind: 'stale-step-continued', taskIds: ['task-went-on'] },
    ]);
    expect(result.violations[0]!.message).toContain(
      'started step s1 of that epoch 570 ms after it',
    );
  });

  it('sets aside a step that began past its lease deadline and stopped there at once', () => {
    // A starved worker: its claim's lease ran out before the step began (found in a chaos run at
    // load average ~29); the step logged lease-expired 1 ms later and wrote nothing.
    const history = historyBuilder()
      .create(100, 'task-starved')
      .step('task-starved', 'w-1', 1, 1_060, 1_061, 's0', {
        outcome: 'lease-expired',
        leaseDeadlineMs: 1_000,
      })
      .step('task-starved', 'w-2', 2, 3_000, 3_100, 's0', { leaseDeadlineMs: 5_000 })
      .get(3_300, 'task-starved', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-starved', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(result.violations).toEqual([]);
    expect(result.staleTails.map((t) => [t.worker, t.epoch, t.outcome])).toEqual([
      ['w-1', 1, 'lease-expired'],
    ]);
  });

  it('counts a re-execution after a kill as a re-execution, not an overlap', () => {
    // w-1 died mid-step (no end line); the kill ends its execution, and w-2 takes over later.
    const history = historyBuilder()
      .create(100, 'task-retaken')
      .step('task-retaken', 'w-1', 1, 150, undefined)
      .chaos(200, 'kill-1', 'kill', 'w-1')
      .step('task-retaken', 'w-2', 2, 1_200, 1_210)
      .get(1_300, 'task-retaken', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-retaken', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(result.violations).toEqual([]);
    expect(result.reExecutions).toEqual([{ taskId: 'task-retaken', step: 's0', epochs: [1, 2] }]);
  });

  it('fails on a completed result that does not match the arguments', () => {
    const wrong = { content: [{ type: 'text', text: 'Computed x in 2 s' }] };
    const history = historyBuilder()
      .create(100, 'task-wrong', 'acme', 'slow_compute', { seconds: 1, label: 'x' })
      .get(2_000, 'task-wrong', 'completed', { result: wrong })
      .final(5_000, 'task-wrong', 'completed', { result: wrong });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([{ kind: 'result-mismatch', taskIds: ['task-wrong'] }]);
    expect(result.violations[0]!.message).toContain('expected text "Computed x in 1 s"');
  });

  it('fails on a task seen terminal only after its bound', () => {
    const history = historyBuilder(1_000)
      .create(100, 'task-slow')
      .get(3_000, 'task-slow', 'completed', { result: FAILING_JOB_RESULT })
      .final(5_000, 'task-slow', 'completed', { result: FAILING_JOB_RESULT });
    const result = checkHistory(history.records);
    expect(kindsAndIds(result)).toEqual([
      { kind: 'not-terminal-in-bound', taskIds: ['task-slow'] },
    ]);
  });

  describe('answers while something is down', () => {
    const STORE_UNAVAILABLE = {
      httpStatus: 503,
      errorCode: -32603,
      errorMessage: 'task store unavailable (cannot connect to the database); retry in 1 s',
      retryAfter: '1',
      errorReason: 'store_unavailable',
    };

    it('passes 503 refusals that carry Retry-After, and a bare 502 of the load balancer', () => {
      const history = historyBuilder()
        .cleanTask(100, 'task-a')
        .call(200, 'tools/call', STORE_UNAVAILABLE)
        .call(210, 'tasks/get', STORE_UNAVAILABLE, 'task-a')
        .call(
          220,
          'tasks/get',
          { httpStatus: 502, errorMessage: 'HTTP 502: not a JSON-RPC reply' },
          'task-a',
        );
      expect(kindsAndIds(checkHistory(history.records))).toEqual([]);
    });

    it('fails a run with any HTTP 500, naming the method and the task', () => {
      const history = historyBuilder()
        .cleanTask(100, 'task-a')
        .call(
          200,
          'tasks/get',
          { httpStatus: 500, errorCode: -32603, errorMessage: 'Internal error' },
          'task-a',
        )
        .call(210, 'tools/call', {
          httpStatus: 500,
          errorMessage: 'HTTP 500: not a JSON-RPC reply',
        });
      const result = checkHistory(history.records);
      expect(kindsAndIds(result)).toEqual([
        { kind: 'http-500', taskIds: ['task-a'] },
        { kind: 'http-500', taskIds: [] },
      ]);
      expect(result.violations[0]!.message).toBe(
        'tasks/get on gw-1 answered HTTP 500 -32603 "Internal error" (500 is for bugs)',
      );
    });

    it('fails a 5xx JSON-RPC answer without Retry-After, also on a final read', () => {
      const { retryAfter: _, ...withoutRetryAfter } = STORE_UNAVAILABLE;
      const history = historyBuilder()
        .create(100, 'task-a')
        .get(150, 'task-a', 'completed', { result: FAILING_JOB_RESULT })
        .call(200, 'tasks/cancel', withoutRetryAfter, 'task-a')
        .final(5_000, 'task-a', undefined, {
          httpStatus: 504,
          errorCode: -32603,
          errorMessage: 'Request timed out after 30000 ms',
        });
      const result = checkHistory(history.records);
      const unavailable = result.violations.filter(
        (v) => v.kind === 'unavailable-without-retry-after',
      );
      expect(unavailable.map((v) => v.taskIds)).toEqual([['task-a'], ['task-a'], ['task-a']]);
      expect(unavailable.map((v) => v.message)).toContain(
        'final tasks/get on gw-1 answered HTTP 504 -32603 "Request timed out after 30000 ms" without Retry-After',
      );
    });
  });
});
