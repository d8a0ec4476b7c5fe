import { historyBuilder, FAILING_JOB_RESULT } from './history-builder.js';

/**
 * A made-up 20-second run: 200 tasks (one every 100 ms) on two workers, a worker killed at 8 s
 * whose running step is taken over 1.5 s later, and some errors while it was down.
 */
export function syntheticRun() {
  const start = 1_000_000;
  const history = historyBuilder(30_000, start);
  history.chaos(start + 8_000, 'kill-worker-1', 'kill', 'w-1');
  for (let i = 0; i < 200; i += 1) {
    const t = start + i * 100;
    const id = `task-${String(i).padStart(3, '0')}`;
    const worker = i % 2 === 0 ? 'w-1' : 'w-2';
    history.create(t, id);
    if (i === 79) {
      // On w-1 when it died: no end line; retaken by w-2 after the lease ran out.
      history.step(id, 'w-1', 1, start + 7_990, undefined);
      history.step(id, 'w-2', 2, start + 9_500, start + 9_510);
      history.get(start + 9_600, id, 'completed', { result: FAILING_JOB_RESULT });
    } else {
      history.step(id, worker, 1, t + 20, t + 25);
      history.get(t + 60, id, 'completed', { result: FAILING_JOB_RESULT });
    }
    history.final(start + 25_000, id, 'completed', { result: FAILING_JOB_RESULT });
  }
  for (let i = 0; i < 5; i += 1) {
    history.probe(start + 8_100 + i * 50, 'task-010', 'acme', {
      errorMessage: 'ECONNREFUSED 127.0.0.1:25001',
    });
  }
  return history;
}
