/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { TaskListRow } from '@mcp-tasks/store';
import type { ConsoleSession } from '../session.js';
import { Layout, StatusBadge, age } from './layout.js';

const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

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
