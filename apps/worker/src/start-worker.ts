import type { RunningTracing } from '@mcp-tasks/tracing';
import { EnvError, parseEnv, type WorkerConfig } from './env.js';
import { createLogger } from './logger.js';
import { createShutdown } from './shutdown.js';
import { StartupError, describeStartupError } from './startup-errors.js';
import { createWorker } from './worker.js';

function loadConfig(): WorkerConfig {
  try {
    return parseEnv(process.env);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
/** Env → worker → start, and the way back out on SIGTERM (sending the last spans, if traced). */
export function startWorker(tracing: RunningTracing | undefined): void {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, workerId: config.workerId });
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled rejection');
    process.exit(1);
  });

  async function main(): Promise<void> {
    const worker = await createWorker({ config, logger });
    await worker.start();
    const shutdown = createShutdown({
      worker,
      logger,
      graceMs: config.shutdownGraceMs,
      exit: (code) => {
        if (tracing === undefined) process.exit(code);
        else void tracing.shutdown().finally(() => process.exit(code));
      },
    });
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
  }

  main().catch((error: unknown) => {
    const described =
      error instanceof StartupError ? error.message : describeStartupError(error, config);
    if (described !== undefined) process.stderr.write(`${described}\n`);
    else logger.fatal({ err: error }, 'worker failed to start');
    process.exit(1);
  });
}
