import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout, one base field set per process. */
export function createLogger(options: { level: string; workerId: string }): Logger {
  return pino({
    level: options.level,
    base: { service: 'mcp-tasks-worker', workerId: options.workerId },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
