import { parseTracingEnv, startTracing } from '@mcp-tasks/tracing';

/**
 * Entry only. Tracing (docs/tracing.md) starts before the gateway's modules are loaded, since its
 * instrumentations patch `pg` and `ioredis` as they are imported; when it is off nothing of the
 * SDK is loaded. A bad OTEL_* value is reported with every other problem by parseEnv.
 */
const tracing = parseTracingEnv(process.env);
const running =
  tracing.ok && tracing.settings.enabled
    ? await startTracing({
        defaultServiceName: 'mcp-tasks-gateway',
        protocol: tracing.settings.protocol,
      })
    : undefined;
const { startGateway } = await import('./start-gateway.js');
startGateway(running);
