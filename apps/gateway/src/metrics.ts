import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface GatewayMetrics {
  registry: Registry;
  requests: Counter<'method' | 'code' | 'status'>;
  duration: Histogram<'method'>;
  tasksCreated: Counter<'tool'>;
  openStreams: Gauge;
  streamsDropped: Counter;
  tenantLimits: Gauge<'limit'>;
  tenantRefusals: Counter<'reason'>;
  tenantInFlightHighest: Gauge;
  tenantRateFallbacks: Counter;
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
    // Per-tenant figures carry no tenant label: tenants are unbounded, a label each would be too.
    tenantLimits: new Gauge({
      name: 'mcp_tenant_limit',
      help: 'The per-tenant limits in effect, by setting (0: off)',
      labelNames: ['limit'],
      registers: [registry],
    }),
    tenantRefusals: new Counter({
      name: 'mcp_tenant_refusals_total',
      help: 'Creates refused with 429 because a tenant was over a limit, by reason (tenant_in_flight_limit, tenant_rate_limited)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    tenantInFlightHighest: new Gauge({
      name: 'mcp_tenant_in_flight_highest',
      help: 'The most tasks in flight of any one tenant this replica counted in its last count (compare with mcp_tenant_limit{limit="TENANT_MAX_IN_FLIGHT"})',
      registers: [registry],
    }),
    tenantRateFallbacks: new Counter({
      name: 'mcp_tenant_rate_fallbacks_total',
      help: 'Times Redis did not answer the tenant create-rate bucket and this replica limited on its own for 1 s',
      registers: [registry],
    }),
  };
}
