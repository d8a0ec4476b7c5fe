import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createShutdown } from './shutdown.js';

const silent = pino({ level: 'silent' });
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function exitRecorder() {
  let resolveCode: (code: number) => void = () => undefined;
  const code = new Promise<number>((resolve) => (resolveCode = resolve));
  return { code, exit: (value: number) => resolveCode(value) };
}

/** A worker whose close() ends when `finishClose` is called, recording what was asked of it. */
function recordingWorker() {
  const steps: string[] = [];
  let finishClose: (outcome?: Error) => void = () => undefined;
  const worker = {
    heldCount: () => 2,
    drain: () => steps.push('drain'),
    abortRunningSteps: () => steps.push('abort running steps'),
    close: () => {
      steps.push('close');
      return new Promise<void>((resolve, reject) => {
        finishClose = (error) => (error === undefined ? resolve() : reject(error));
      });
    },
  };
  return { steps, worker, finish: (error?: Error) => finishClose(error) };
}

describe('createShutdown', () => {
  it('drains, closes and exits 0, leaving alone the steps that end within the grace', async () => {
    const { steps, worker, finish } = recordingWorker();
    const { code, exit } = exitRecorder();
    const stop = createShutdown({ worker, logger: silent, graceMs: 200, exit });
    void stop('SIGTERM');
    void stop('SIGINT');
    expect(steps).toEqual(['drain', 'close']);
    finish();
    await expect(code).resolves.toBe(0);
    await wait(300);
    expect(steps).toEqual(['drain', 'close']);
  });

  it('stops the steps still running when the grace is over', async () => {
    const { steps, worker, finish } = recordingWorker();
    const { code, exit } = exitRecorder();
    void createShutdown({ worker, logger: silent, graceMs: 50, exit })('SIGTERM');
    await wait(120);
    expect(steps).toEqual(['drain', 'close', 'abort running steps']);
    finish();
    await expect(code).resolves.toBe(0);
  });

  it('exits 1 when closing fails', async () => {
    const { worker, finish } = recordingWorker();
    const { code, exit } = exitRecorder();
    void createShutdown({ worker, logger: silent, graceMs: 1_000, exit })('SIGTERM');
    finish(new Error('redis gone'));
    await expect(code).resolves.toBe(1);
  });

  it('exits 1 at the hard deadline when closing hangs', async () => {
    const { worker } = recordingWorker();
    const { code, exit } = exitRecorder();
    void createShutdown({ worker, logger: silent, graceMs: 50, hardMarginMs: 50, exit })('SIGTERM');
    await expect(code).resolves.toBe(1);
  });
});
