import { describe, expect, it } from 'vitest';
import { buildTaskSnapshot } from './snapshot.js';
import type { Task } from './task.js';

const base: Task = {
  id: 'tsk_AAAAAAAAAAAAAAAAAAAAAAAA',
  owner: { tenant: 't1', principal: 'p1' },
  operation: { method: 'tools/call', toolName: 'generate_report', arguments: { size: 'small' } },
  status: 'working',
  statusMessage: 'Preparing report outline.',
  createdAt: new Date('2026-08-21T10:30:00Z'),
  lastUpdatedAt: new Date('2026-08-21T10:31:00Z'),
  ttlMs: 900000,
  pollIntervalMs: 1000,
  result: null,
  error: null,
  inputRequests: {},
  issuedInputKeys: [],
  inputResponses: {},
  cancelRequestedAt: null,
  checkpoint: null,
  lease: null,
  leaseEpoch: 0,
  attempts: 0,
  failures: 0,
};

const approve = { method: 'elicitation/create', params: { mode: 'form', message: 'Approve?' } };

describe('task snapshots (R14)', () => {
  it('shows only the base fields while working', () => {
    expect(buildTaskSnapshot(base)).toEqual({
      taskId: base.id,
      status: 'working',
      statusMessage: 'Preparing report outline.',
      createdAt: '2026-08-21T10:30:00.000Z',
      lastUpdatedAt: '2026-08-21T10:31:00.000Z',
      ttlMs: 900000,
      pollIntervalMs: 1000,
    });
  });

  it('shows inputRequests only with input_required', () => {
    const waiting = { ...base, status: 'input_required' as const, inputRequests: { a: approve } };
    expect(buildTaskSnapshot(waiting).inputRequests).toEqual({ a: approve });
    expect(buildTaskSnapshot({ ...waiting, status: 'working' })).not.toHaveProperty(
      'inputRequests',
    );
  });

  it('shows result only with completed and error only with failed', () => {
    const result = { content: [{ type: 'text', text: 'done' }] };
    const error = { code: -32603, message: 'boom' };
    const completed = buildTaskSnapshot({ ...base, status: 'completed', result, error: null });
    expect(completed.result).toEqual(result);
    expect(completed).not.toHaveProperty('error');
    const failed = buildTaskSnapshot({ ...base, status: 'failed', result: null, error });
    expect(failed.error).toEqual(error);
    expect(failed).not.toHaveProperty('result');
    const cancelled = buildTaskSnapshot({ ...base, status: 'cancelled', result, error });
    expect(cancelled).not.toHaveProperty('result');
    expect(cancelled).not.toHaveProperty('error');
  });

  it('omits absent optional fields and keeps ttlMs null when unlimited', () => {
    const snapshot = buildTaskSnapshot({
      ...base,
      statusMessage: null,
      pollIntervalMs: null,
      ttlMs: null,
    });
    expect(Object.keys(snapshot).sort()).toEqual(
      ['createdAt', 'lastUpdatedAt', 'status', 'taskId', 'ttlMs'].sort(),
    );
    expect(snapshot.ttlMs).toBeNull();
  });

  it('refuses to show a completed task without a result', () => {
    expect(() => buildTaskSnapshot({ ...base, status: 'completed' })).toThrow('has no result');
  });
});
