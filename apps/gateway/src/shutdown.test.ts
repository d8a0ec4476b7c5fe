import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createShutdown } from './shutdown.js';

let server: Server;

async function listening(): Promise<Server> {
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

afterEach(() => {
  server?.close();
});

function exitRecorder() {
  let resolveCode: (code: number) => void = () => undefined;
  const code = new Promise<number>((resolve) => (resolveCode = resolve));
  return { code, exit: (value: number) => resolveCode(value) };
}

describe('createShutdown', () => {
  it('fails readiness first, then drains, waits for running handlers, closes and exits 0', async () => {
    const steps: string[] = [];
    const notReady = new AbortController();
    const draining = new AbortController();
    notReady.signal.addEventListener('abort', () => steps.push('not ready'));
    draining.signal.addEventListener('abort', () => steps.push('draining'));
    let running = 1;
    const { code, exit } = exitRecorder();
    const stop = createShutdown({
      server: await listening(),
      logger: pino({ level: 'silent' }),
      notReady,
      draining,
      inFlight: () => running,
      readinessDelayMs: 100,
      graceMs: 1_000,
      closeResources: () => {
        steps.push('close');
        return Promise.resolve();
      },
      exit,
    });
    void stop('SIGTERM');
    expect(steps).toEqual(['not ready']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The server has closed, but a handler still runs: the pools stay open for it.
    expect(steps).toEqual(['not ready', 'draining']);
    expect(server.listening).toBe(false);
    running = 0;
    await expect(code).resolves.toBe(0);
    expect(steps).toEqual(['not ready', 'draining', 'close']);
  });

  it('exits 1 at the hard deadline when closing hangs', async () => {
    const { code, exit } = exitRecorder();
    const stop = createShutdown({
      server: await listening(),
      logger: pino({ level: 'silent' }),
      notReady: new AbortController(),
      draining: new AbortController(),
      inFlight: () => 0,
      readinessDelayMs: 0,
      graceMs: 50,
      hardMarginMs: 100,
      closeResources: () => new Promise<void>(() => undefined),
      exit,
    });
    void stop('SIGTERM');
    await expect(code).resolves.toBe(1);
  });
});
