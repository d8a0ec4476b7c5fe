import { describe, expect, it } from 'vitest';
import { historyBuilder } from '../../test/history-builder.js';
import { summarizeAnswers } from './answers.js';

const STORE_UNAVAILABLE = {
  httpStatus: 503,
  errorCode: -32603,
  errorMessage: 'task store unavailable (the database connection was lost); retry in 1 s',
  retryAfter: '1',
  errorReason: 'store_unavailable',
};

describe('the answers of a run', () => {
  it('counts every answer by class and by the chaos plan it came under, and times each store outage', () => {
    const history = historyBuilder()
      .cleanTask(100, 'task-a')
      .chaos(1_000, 'failover-1', 'kill-primary', 'postgres', 'failover')
      .call(1_100, 'tools/call', STORE_UNAVAILABLE)
      .call(1_200, 'tasks/get', { httpStatus: 200, status: 'working' }, 'task-a')
      .call(1_300, 'tools/call', { errorMessage: 'fetch failed' })
      .call(1_400, 'tasks/get', { httpStatus: 502, errorMessage: 'HTTP 502: not a JSON-RPC reply' })
      .chaos(2_000, 'failover-2', 'promoted', 'postgres', 'failover')
      .create(2_500, 'task-b')
      .call(2_600, 'tasks/get', {
        httpStatus: 500,
        errorCode: -32603,
        errorMessage: 'Internal error',
      })
      .call(2_700, 'tasks/get', {
        httpStatus: 200,
        errorCode: -32602,
        errorMessage: 'Task not found or expired',
      });
    const answers = summarizeAnswers(history.records);
    expect(answers.byClass).toEqual({
      ok: 6,
      'retry later 503 store_unavailable': 1,
      transport: 1,
      'load balancer 502': 1,
      'HTTP 500': 1,
      'error -32602': 1,
    });
    expect(answers.byPlan).toEqual({
      'before chaos': { ok: 2 },
      // task-a's final reads (at 5 100 ms) count here too.
      failover: {
        ok: 4,
        'retry later 503 store_unavailable': 1,
        transport: 1,
        'load balancer 502': 1,
        'HTTP 500': 1,
        'error -32602': 1,
      },
    });
    // From the kill to the first create that succeeded (the one sent at 2 500 ms, answered 5 ms later).
    expect(answers.outages).toHaveLength(1);
    expect(answers.outages[0]).toMatchObject({
      event: { id: 'failover-1' },
      firstCreateMs: 1_505,
      answers: {
        'retry later 503 store_unavailable': 1,
        ok: 1,
        transport: 1,
        'load balancer 502': 1,
      },
    });
  });
});
