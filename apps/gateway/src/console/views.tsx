/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import { raw } from 'hono/html';
import type { Child, FC } from 'hono/jsx';
import type { StoreHealth, TaskEvent, TaskListRow } from '@mcp-tasks/store';
import type { JsonObject, Task } from '@mcp-tasks/tasks';
import type { ConsoleSession } from './session.js';

// Server-rendered pages of the console (hono/jsx: escaped by construction). The client script
// (assets.ts) only adds live updates and small conveniences: every page works without it.

const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

function age(from: Date, now: number): string {
  const s = Math.max(0, Math.round((now - from.getTime()) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  if (s < 129600) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** A setting's length in the largest whole unit that divides it (7 d, 90 s, 250 ms). */
function duration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units)
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export const Layout: FC<{ title: string; session?: ConsoleSession; children?: Child }> = ({
  title,
  session,
  children,
}) => (
  <>
    {raw('<!DOCTYPE html>')}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · mcp-tasks console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        {session === undefined ? null : <meta name="csrf-token" content={session.csrfToken} />}
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header>
          <strong>mcp-tasks console</strong>
          {session === undefined ? null : (
            <nav aria-label="Console">
              <a href="/console">Tasks</a>
              <a href="/console/health">Health</a>
              <span class="who" data-testid="operator">
                {session.operator.tenant === null
                  ? 'all tenants'
                  : `tenant ${session.operator.tenant}`}
                {session.operator.actions ? ' · actions' : ' · read-only'}
              </span>
              <form method="post" action="/console/logout" class="inline">
                <input type="hidden" name="_csrf" value={session.csrfToken} />
                <button type="submit">Log out</button>
              </form>
            </nav>
          )}
        </header>
        <main id="main">{children}</main>
      </body>
    </html>
  </>
);

export const LoginPage: FC<{ error?: string }> = ({ error }) => (
  <Layout title="Log in">
    <h1>Log in</h1>
    <p>Use an operator token of MCP_CONSOLE_TOKENS (not an MCP client token).</p>
    {error === undefined ? null : (
      <p class="error" role="alert">
        {error}
      </p>
    )}
    <form method="post" action="/console/login" class="stack">
      <label for="token">Operator token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="current-password"
        required
        autofocus
      />
      <button type="submit">Log in</button>
    </form>
  </Layout>
);

export const MessagePage: FC<{ title: string; message: string; session?: ConsoleSession }> = ({
  title,
  message,
  session,
}) => (
  <Layout title={title} session={session}>
    <h1>{title}</h1>
    <p role="alert">{message}</p>
    <p>
      <a href="/console">Back to the tasks</a>
    </p>
  </Layout>
);

export const StatusBadge: FC<{ status: string }> = ({ status }) => (
  <span class={`status status-${status}`}>{status}</span>
);

export const TaskRowView: FC<{ row: TaskListRow; now: number }> = ({ row, now }) => (
  <tr data-id={row.id} data-status={row.status}>
    <td>
      <a href={`/console/tasks/${encodeURIComponent(row.id)}`}>
        <code>{row.id.slice(0, 12)}</code>
      </a>
    </td>
    <td>
      <StatusBadge status={row.status} />
    </td>
    <td>{row.toolName}</td>
    <td>{row.tenant}</td>
    <td class="wide">{row.principal}</td>
    <td title={row.createdAt.toISOString()}>{age(row.createdAt, now)}</td>
    <td>{row.attempts}</td>
    <td class="wide">{row.leaseOwner ?? ''}</td>
    <td class="wide message">{row.statusMessage ?? ''}</td>
  </tr>
);

export interface ListQuery {
  status: string[];
  tool: string;
  tenant: string;
  from: string;
  to: string;
  q: string;
}

export const FilterForm: FC<{ query: ListQuery; allTenants: boolean }> = ({
  query,
  allTenants,
}) => (
  <form method="get" action="/console" class="filters" aria-label="Filter tasks">
    <fieldset>
      <legend>Status</legend>
      {STATUSES.map((status) => (
        <label>
          <input
            type="checkbox"
            name="status"
            value={status}
            checked={query.status.includes(status)}
          />{' '}
          {status}
        </label>
      ))}
    </fieldset>
    <label>
      Tool <input name="tool" value={query.tool} />
    </label>
    {allTenants ? (
      <label>
        Tenant <input name="tenant" value={query.tenant} />
      </label>
    ) : null}
    <label>
      From <input name="from" type="datetime-local" value={query.from} />
    </label>
    <label>
      To <input name="to" type="datetime-local" value={query.to} />
    </label>
    <label>
      Search <input name="q" type="search" value={query.q} placeholder="arguments or message" />
    </label>
    <button type="submit">Filter</button>
  </form>
);

export const ListPage: FC<{
  session: ConsoleSession;
  query: ListQuery;
  queryString: string;
  rows: TaskListRow[];
  nextHref?: string;
  /** The search examined its bounded number of rows and stopped: older tasks were not searched. */
  searchCut?: { scanned: number; to: Date } | undefined;
  firstPage: boolean;
  now: number;
}> = ({ session, query, queryString, rows, nextHref, searchCut, firstPage, now }) => (
  <Layout title="Tasks" session={session}>
    <h1>
      Tasks <span class="live" id="live-state" aria-live="polite"></span>
    </h1>
    <FilterForm query={query} allTenants={session.operator.tenant === null} />
    {session.operator.actions ? (
      <p>
        <a href={`/console/bulk-cancel${queryString}`} data-testid="bulk-cancel">
          Cancel every task matching this filter…
        </a>
      </p>
    ) : null}
    <div class="scroll">
      <table id="task-list" data-live={firstPage ? 'prepend' : 'update'}>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Status</th>
            <th scope="col">Tool</th>
            <th scope="col">Tenant</th>
            <th scope="col" class="wide">
              Principal
            </th>
            <th scope="col">Age</th>
            <th scope="col">Attempts</th>
            <th scope="col" class="wide">
              Worker
            </th>
            <th scope="col" class="wide">
              Message
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <TaskRowView row={row} now={now} />
          ))}
        </tbody>
      </table>
    </div>
    {rows.length === 0 ? (
      <p id="empty">{searchCut === undefined ? 'No task matches.' : 'No match on this page.'}</p>
    ) : null}
    {searchCut === undefined ? null : (
      <p id="search-cut" role="status">
        The search looked at the {searchCut.scanned.toLocaleString('en')} newest tasks of this
        filter (back to {searchCut.to.toISOString()}); older ones are searched on the next page.
        Narrow by status, tool, tenant or time to search further at once.
      </p>
    )}
    {nextHref === undefined ? null : (
      <p>
        <a href={nextHref} rel="next">
          {searchCut === undefined ? 'Older tasks →' : 'Search older tasks →'}
        </a>
      </p>
    )}
  </Layout>
);

function fieldsOf(request: JsonObject): [string, JsonObject][] {
  const params = request.params as JsonObject | undefined;
  const schema = params?.requestedSchema as JsonObject | undefined;
  const properties = (schema?.properties ?? {}) as Record<string, JsonObject>;
  return Object.entries(properties);
}

const AnswerField: FC<{ inputKey: string; name: string; schema: JsonObject }> = ({
  inputKey,
  name,
  schema,
}) => {
  const id = `f-${inputKey}-${name}`;
  const label = typeof schema.title === 'string' ? schema.title : name;
  const fieldName = `field.${name}`;
  if (Array.isArray(schema.enum))
    return (
      <p>
        <label for={id}>{label}</label>
        <select id={id} name={fieldName}>
          {schema.enum.map((option) => {
            const text = typeof option === 'string' ? option : JSON.stringify(option);
            return <option value={text}>{text}</option>;
          })}
        </select>
      </p>
    );
  if (schema.type === 'boolean')
    return (
      <p>
        <label>
          <input type="checkbox" name={fieldName} value="true" /> {label}
        </label>
      </p>
    );
  const numeric = schema.type === 'number' || schema.type === 'integer';
  return (
    <p>
      <label for={id}>{label}</label>
      <input
        id={id}
        name={fieldName}
        type={numeric ? 'number' : 'text'}
        step={schema.type === 'number' ? 'any' : undefined}
      />
    </p>
  );
};

export const TaskPage: FC<{
  session: ConsoleSession;
  task: Task;
  events: TaskEvent[];
  notice?: string;
}> = ({ session, task, events, notice }) => {
  const active = task.status === 'working' || task.status === 'input_required';
  const canAct = session.operator.actions;
  return (
    <Layout title={`Task ${task.id.slice(0, 12)}`} session={session}>
      <div id="task-main" data-task-id={task.id}>
        <h1>
          Task <code>{task.id}</code> <StatusBadge status={task.status} />
        </h1>
        {notice === undefined ? null : (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <dl class="facts">
          <dt>Tool</dt>
          <dd>{task.operation.toolName}</dd>
          <dt>Tenant / principal</dt>
          <dd>
            {task.owner.tenant} / {task.owner.principal}
          </dd>
          <dt>Message</dt>
          <dd>{task.statusMessage ?? '—'}</dd>
          <dt>Created</dt>
          <dd>{task.createdAt.toISOString()}</dd>
          <dt>Last updated</dt>
          <dd>{task.lastUpdatedAt.toISOString()}</dd>
          <dt>TTL / poll interval</dt>
          <dd>
            {task.ttlMs === null ? 'none' : `${task.ttlMs} ms`} / {task.pollIntervalMs ?? '—'} ms
          </dd>
          <dt>Attempts / failures</dt>
          <dd>
            {task.attempts} / {task.failures}
          </dd>
          <dt>Lease</dt>
          <dd>
            {task.lease === null
              ? 'not held'
              : `${task.lease.owner} (epoch ${task.lease.epoch}, until ${task.lease.expiresAt.toISOString()})`}
          </dd>
          <dt>Cancel requested</dt>
          <dd>{task.cancelRequestedAt?.toISOString() ?? 'no'}</dd>
        </dl>
        {canAct && active && task.cancelRequestedAt === null ? (
          <form method="post" action={`/console/tasks/${task.id}/cancel`} class="inline">
            <input type="hidden" name="_csrf" value={session.csrfToken} />
            <button type="submit" class="danger">
              Cancel this task
            </button>
          </form>
        ) : null}
        <h2>Arguments</h2>
        <pre>{json(task.operation.arguments)}</pre>
        {task.result === null ? null : (
          <>
            <h2>Result</h2>
            <pre>{json(task.result)}</pre>
          </>
        )}
        {task.error === null ? null : (
          <>
            <h2>Error</h2>
            <pre>{json(task.error)}</pre>
          </>
        )}
        {Object.keys(task.inputRequests).length === 0 ? null : (
          <>
            <h2>Outstanding input</h2>
            {Object.entries(task.inputRequests).map(([key, request]) => {
              const message = (request.params as JsonObject | undefined)?.message;
              return (
                <section class="input-request" data-input-key={key}>
                  <h3>
                    <code>{key}</code>
                  </h3>
                  {typeof message === 'string' ? <p>{message}</p> : null}
                  {canAct ? (
                    <form method="post" action={`/console/tasks/${task.id}/answer`} class="stack">
                      <input type="hidden" name="_csrf" value={session.csrfToken} />
                      <input type="hidden" name="key" value={key} />
                      {fieldsOf(request).map(([name, schema]) => (
                        <AnswerField inputKey={key} name={name} schema={schema} />
                      ))}
                      <div>
                        <button type="submit" name="action" value="accept">
                          Answer
                        </button>{' '}
                        <button type="submit" name="action" value="decline">
                          Decline
                        </button>
                      </div>
                    </form>
                  ) : (
                    <pre>{json(request)}</pre>
                  )}
                </section>
              );
            })}
          </>
        )}
        <h2>History</h2>
        <label>
          Filter events <input id="history-filter" type="search" placeholder="e.g. claimed" />
        </label>
        <div class="scroll">
          <table id="history">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">At</th>
                <th scope="col">Event</th>
                <th scope="col">By</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr data-kind={event.kind}>
                  <td>{event.id}</td>
                  <td>{event.at.toISOString()}</td>
                  <td>
                    <span class={`event event-${event.kind}`}>{event.kind}</span>
                  </td>
                  <td>{event.actor ?? ''}</td>
                  <td>
                    <code>
                      {Object.keys(event.data).length === 0 ? '' : JSON.stringify(event.data)}
                    </code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </Layout>
  );
};

export const BulkCancelPage: FC<{
  session: ConsoleSession;
  count: number;
  limit: number;
  query: Record<string, string | string[]>;
  description: string;
}> = ({ session, count, limit, query, description }) => (
  <Layout title="Bulk cancel" session={session}>
    <h1>Cancel by filter</h1>
    <p>Filter: {description}</p>
    <p data-testid="preview-count">
      <strong>{count}</strong> unfinished task{count === 1 ? '' : 's'} match
      {count > limit ? ` (one confirmation cancels the oldest ${limit})` : ''}.
    </p>
    {count === 0 ? (
      <p>
        <a href="/console">Back</a>
      </p>
    ) : (
      <form method="post" action="/console/bulk-cancel" class="stack">
        <input type="hidden" name="_csrf" value={session.csrfToken} />
        {Object.entries(query).flatMap(([name, value]) =>
          (Array.isArray(value) ? value : [value]).map((v) => (
            <input type="hidden" name={name} value={v} />
          )),
        )}
        <input type="hidden" name="expected" value={String(count)} />
        <button type="submit" class="danger">
          Cancel {Math.min(count, limit)} task{count === 1 ? '' : 's'}
        </button>
        <a href="/console">Keep them</a>
      </form>
    )}
  </Layout>
);

function bytes(n: number): string {
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

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
    {session.operator.tenant === null ? (
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
    ) : null}
  </Layout>
);
