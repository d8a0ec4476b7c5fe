import type { WorkerConfig } from './env.js';

/**
 * A startup failure an operator causes and can fix, as one line naming the variable, what failed
 * and what to do; undefined for anything else (logged with its stack as before).
 */
export function describeStartupError(
  error: unknown,
  config: Pick<WorkerConfig, 'metricsPort'>,
): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const syscall = (error as { syscall?: unknown } | null)?.syscall;
  if (code === 'EADDRINUSE' && syscall === 'listen') {
    const port = config.metricsPort;
    return (
      `METRICS_PORT=${port}: port ${port} is already in use (another worker on this host?). ` +
      'Set METRICS_PORT to a free port, or METRICS_PORT=0 to run without /healthz and /metrics.'
    );
  }
  return undefined;
}

/** A startup failure already described in one line for the operator (printed without a stack). */
export class StartupError extends Error {
  override name = 'StartupError';
}
