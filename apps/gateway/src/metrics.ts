import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface GatewayMetrics {
  registry: Registry;
  requests: Counter<'method' | 'code' | 'status'>;
  duration: Histogram<'method'>;
  tasksCreated: Counter<'tool'>;
  openStreams: Gauge;
  streamsDropped: Counter;
}

/** One registry per gateway instance (factories, not the prom-client global), so tests stay apart. */
export function createMetrics(options: { collectDefaults?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.collectDefaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'mcp_requests_total',
      help: 'MCP requests by JSON-RPC method, JSON-RPC outcome code ("ok" for results) and HTTP status',
      labelNames: ['method', 'code', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'mcp_request_duration_seconds',
      help: 'Time to answer an MCP request (for listen: until the stream is opened)',
      labelNames: ['method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    tasksCreated: new Counter({
      name: 'mcp_tasks_created_total',
      help: 'Tasks created by tools/call, by tool',
      labelNames: ['tool'],
      registers: [registry],
    }),
    openStreams: new Gauge({
      name: 'mcp_sse_streams_open',
      help: 'subscriptions/listen streams currently open on this replica',
      registers: [registry],
    }),
    streamsDropped: new Counter({
      name: 'mcp_sse_streams_dropped_total',
      help: 'subscriptions/listen streams dropped because the client stopped reading',
      registers: [registry],
    }),
  };
}
