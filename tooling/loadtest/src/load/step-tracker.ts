import type { StepRecord } from '../history/records.js';

const STALE_MS = 10_000;

/** Which workers are running a step right now, from their step log (for "kill mid-step"). */
export function createStepTracker() {
  const running = new Map<string, { worker: string; startMs: number }>();
  return {
    see(step: StepRecord) {
      const key = `${step.taskId}\u0000${step.step}\u0000${step.epoch}\u0000${step.worker}`;
      if (step.phase === 'start') running.set(key, { worker: step.worker, startMs: step.startMs });
      else running.delete(key);
    },
    busyWorkers(now = performance.timeOrigin + performance.now()): string[] {
      const busy = new Set<string>();
      for (const [key, r] of running) {
        if (now - r.startMs > STALE_MS) running.delete(key);
        else busy.add(r.worker);
      }
      return [...busy];
    },
  };
}
