import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type JobOutcome =
  | 'skipped'
  | 'passed_over'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'input_required'
  | 'retry_scheduled'
  | 'released'
  | 'lease_lost'
  | 'tool_unavailable'
  | 'outage'
  | 'error';

export interface WorkerMetrics {
  registry: Registry;
  jobs: Counter<'outcome'>;
  claims: Counter<'task'>;
  steps: Counter<'tool'>;
  stepDuration: Histogram<'tool'>;
  leasesLost: Counter;
  feedRechecks: Counter;
  toolMismatches: Counter<'tool' | 'reason'>;
  sweeps: Counter<'role'>;
  sweepStepErrors: Counter<'step'>;
  redispatched: Counter;
  sweptTasks: Counter<'step'>;
  heldTasks: Gauge;
}

/** A registry per process (never the global one), so tests can build several. */
export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    jobs: new Counter({
      name: 'mcp_worker_jobs_total',
      help: 'Wake-ups processed, by what became of the task',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    claims: new Counter({
      name: 'mcp_worker_claims_total',
      help: 'Claims by which task a wake-up took: "named" (its own) or "fairer" (the fairest waiting task instead, docs/adr/0003)',
      labelNames: ['task'],
      registers: [registry],
    }),
    steps: new Counter({
      name: 'mcp_worker_steps_total',
      help: 'Tool steps executed',
      labelNames: ['tool'],
      registers: [registry],
    }),
    stepDuration: new Histogram({
      name: 'mcp_worker_step_duration_seconds',
      help: 'Duration of one tool step',
      labelNames: ['tool'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    leasesLost: new Counter({
      name: 'mcp_worker_leases_lost_total',
      help: 'Attempts stopped because their lease was superseded (writes rejected by the fence)',
      registers: [registry],
    }),
    feedRechecks: new Counter({
      name: 'mcp_worker_feed_rechecks_total',
      help: 'Held tasks re-read because the change feed named them (a cancel request, an expiry)',
      registers: [registry],
    }),
    toolMismatches: new Counter({
      name: 'mcp_worker_tool_mismatches_total',
      help: 'Claims of a task whose tool (or a new enough version of it) this worker lacks',
      labelNames: ['tool', 'reason'],
      registers: [registry],
    }),
    sweeps: new Counter({
      name: 'mcp_worker_sweeps_total',
      help: 'Sweeper ticks, by whether this worker led the sweep',
      labelNames: ['role'],
      registers: [registry],
    }),
    sweepStepErrors: new Counter({
      name: 'mcp_worker_sweep_step_errors_total',
      help: 'Sweep steps (expire, redispatch, delete) that failed; the other steps still ran',
      labelNames: ['step'],
      registers: [registry],
    }),
    redispatched: new Counter({
      name: 'mcp_worker_tasks_redispatched_total',
      help: 'Orphaned tasks the sweeper re-enqueued',
      registers: [registry],
    }),
    sweptTasks: new Counter({
      name: 'mcp_worker_swept_tasks_total',
      help: 'Tasks the sweeper failed past their ttl (step="expire") or deleted past retention (step="delete")',
      labelNames: ['step'],
      registers: [registry],
    }),
    heldTasks: new Gauge({
      name: 'mcp_worker_held_tasks',
      help: 'Tasks this worker holds a lease on right now',
      registers: [registry],
    }),
  };
}
