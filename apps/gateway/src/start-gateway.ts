import type { RunningTracing } from '@mcp-tasks/tracing';
import { pino } from 'pino';
import { parseEnv, type GatewayConfig } from './env.js';
import { createGateway } from './gateway.js';
import { createShutdown } from './shutdown.js';
import { StartupError, describeListenFailure } from './startup-errors.js';

function loadConfig(): GatewayConfig {
  const parsed = parseEnv(process.env);
  if (parsed.ok) return parsed.config;
  process.stderr.write(
    `gateway: invalid configuration:\n${parsed.problems.map((problem) => `  - ${problem}`).join('\n')}\n`,
  );
  process.exit(1);
}

/** Env → gateway → listen, and the way back out on SIGTERM (sending the last spans, if traced). */
async function main(tracing: RunningTracing | undefined): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel, base: { service: 'gateway', pid: process.pid } });
  const gateway = await createGateway({ config, logger });
  const server = gateway.listen();
  server.once('error', (error) => {
    const described = describeListenFailure(error, { port: config.port, host: config.host });
    if (described === undefined) throw error;
    process.stderr.write(`gateway: ${described}\n`);
    process.exit(1);
  });
  const stop = createShutdown({
    server,
    logger,
    notReady: gateway.notReady,
    draining: gateway.draining,
    inFlight: () => gateway.inFlight(),
    readinessDelayMs: config.shutdownDelayMs,
    graceMs: config.shutdownGraceMs,
    closeResources: async () => {
      await gateway.close();
      // Last: the spans of the drain itself are sent too.
      await tracing?.shutdown();
    },
    exit: (code) => process.exit(code),
  });
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

export function startGateway(tracing: RunningTracing | undefined): void {
  main(tracing).catch((error: unknown) => {
    if (error instanceof StartupError) {
      if (!error.logged) process.stderr.write(`gateway: ${error.message}\n`);
    } else
      process.stderr.write(
        `gateway: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    process.exit(1);
  });
}
