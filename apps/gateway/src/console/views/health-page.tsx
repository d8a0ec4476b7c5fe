/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { StoreHealth } from '@mcp-tasks/store';
import type { ConsoleSession } from '../session.js';
import { Layout, age, duration } from './layout.js';

function bytes(n: number): string {
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Who consumes the queue (Redis heartbeats) and which workers hold leases. */
const WorkersSection: FC<{ health: StoreHealth; workers: unknown; now: number }> = ({
  health,
  workers,
  now,
}) => (
  <>
    <h2>Workers</h2>
    <p>
      Queue consumers (Redis heartbeats):{' '}
      {workers === undefined ? 'not watched' : <code>{JSON.stringify(workers)}</code>}
    </p>
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">Tasks held</th>
            <th scope="col">Latest lease expiry</th>
          </tr>
        </thead>
        <tbody>
          {health.held.map((worker) => (
            <tr>
              <td>{worker.worker}</td>
              <td>{worker.tasksHeld}</td>
              <td>
                {worker.latestLeaseExpiry.toISOString()}
                {worker.latestLeaseExpiry.getTime() < now ? ' (expired: worker lost?)' : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  </>
);

/** The sweeper and the tables' sizes: for an operator of every tenant only. */
const SweeperAndStorage: FC<{ health: StoreHealth; now: number }> = ({ health, now }) => (
  <>
    <h2>Sweeper and storage</h2>
    <dl class="facts">
      <dt>Sweeper leader (last sweep by)</dt>
      <dd data-testid="sweeper-leader">
        {health.lastSweep === null ? 'no sweep recorded yet' : health.lastSweep.workerId}
        {health.sweepInProgress ? ' (a sweep is running now)' : ''}
        {` — ${health.sweeperCandidates} worker${health.sweeperCandidates === 1 ? '' : 's'} eligible`}
      </dd>
      <dt>Last sweep</dt>
      <dd data-testid="last-sweep">
        {health.lastSweep === null
          ? '—'
          : `${age(health.lastSweep.sweptAt, now)} ago (${health.lastSweep.sweptAt.toISOString()}), every ${duration(health.lastSweep.intervalMs)}; took ${health.lastSweep.durationMs} ms: ${health.lastSweep.expired} expired, ${health.lastSweep.redispatched} woken, ${health.lastSweep.deleted} deleted`}
      </dd>
      <dt>Replica lag</dt>
      <dd>
        {health.replicaLagSeconds === undefined
          ? 'no read replica'
          : health.replicaLagSeconds === null
            ? 'caught up (idle)'
            : `${health.replicaLagSeconds.toFixed(2)} s`}
      </dd>
      <dt>tasks table</dt>
      <dd>{bytes(health.tasksBytes)}</dd>
      <dt>task_events table</dt>
      <dd>{bytes(health.eventsBytes)}</dd>
      <dt>Ended tasks kept</dt>
      <dd>
        {health.terminalKept}
        {health.oldestTerminalExpiry === null
          ? ''
          : `, earliest expiry ${health.oldestTerminalExpiry.toISOString()} (deleted after the retention above past it)`}
      </dd>
    </dl>
  </>
);

export const HealthPage: FC<{
  session: ConsoleSession;
  health: StoreHealth;
  workers: unknown;
  now: number;
  throughput: { minutes: number[]; completed: number[]; failed: number[]; created: number[] };
  latency: { minutes: number[]; p50: (number | null)[]; p95: (number | null)[] };
  /** The gateway's settings an operator asks about beside the table sizes. */
  settings: { taskTtlMs: number };
}> = ({ session, health, workers, now, throughput, latency, settings }) => (
  <Layout title="Health" session={session}>
    <h1>Health</h1>
    <h2>Queue</h2>
    <dl class="facts">
      <dt>Runnable (working, not held)</dt>
      <dd data-testid="runnable">{health.runnable}</dd>
      <dt>Oldest runnable</dt>
      <dd>
        {health.oldestRunnableCreatedAt === null
          ? '—'
          : `${age(health.oldestRunnableCreatedAt, now)} old`}
      </dd>
      <dt>Waiting for input</dt>
      <dd>{health.inputRequired}</dd>
    </dl>
    <WorkersSection health={health} workers={workers} now={now} />
    <div class="charts">
      <section>
        <h2>Throughput (last hour, per minute)</h2>
        <div id="throughput-chart" data-series={JSON.stringify(throughput)}></div>
      </section>
      <section>
        <h2>Latency (last hour, per minute)</h2>
        <p class="hint">
          Seconds from create to settle (completed, failed, expired, cancelled) of the tasks that
          settled in each minute: median and 95th percentile, from the history.
        </p>
        <div id="latency-chart" data-series={JSON.stringify(latency)}></div>
      </section>
    </div>
    <h2>Settings</h2>
    <dl class="facts">
      <dt>Default task TTL (TASK_TTL_MS, this gateway)</dt>
      <dd data-testid="task-ttl">{duration(settings.taskTtlMs)}</dd>
      <dt>Retention after a task ends (TASK_RETENTION_MS, the sweeper)</dt>
      <dd data-testid="retention">
        {health.lastSweep === null
          ? 'not known yet (no sweep recorded)'
          : duration(health.lastSweep.retentionMs)}
      </dd>
    </dl>
    {session.operator.tenant === null ? <SweeperAndStorage health={health} now={now} /> : null}
  </Layout>
);
