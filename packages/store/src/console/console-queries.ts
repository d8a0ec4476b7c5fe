import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import { isWellFormedTaskId, type Task, type TaskStatus } from '@mcp-tasks/tasks';
import type { Database, Db, TaskRow } from '../db/database.js';
import { taskRowToTask } from '../rows/task-row.js';

/** What an operator may see: one tenant, or every tenant (`null`). */
export interface OperatorScope {
  tenant: string | null;
}

/** The console list's filters; each one absent means "any". */
export interface TaskFilter {
  statuses?: readonly TaskStatus[];
  tool?: string;
  tenant?: string;
  createdFrom?: Date;
  createdTo?: Date;
  /** Case-insensitive substring of the arguments (as JSON text) or the status message. */
  search?: string;
}

/**
 * A keyset position: the (created_at, id) of the last row of the previous page. `createdAt` is
 * the timestamp as Postgres keeps it, to the microsecond (ISO 8601, UTC): a JS Date would cut it
 * to the millisecond, and a task created in the same millisecond just before the page's last row
 * would then fall between two pages.
 */
export interface PageCursor {
  createdAt: string;
  id: string;
}

/** created_at to the microsecond, as PageCursor carries it. */
const CURSOR_AT = sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export interface TaskListRow {
  id: string;
  tenant: string;
  principal: string;
  toolName: string;
  status: TaskStatus;
  statusMessage: string | null;
  createdAt: Date;
  lastUpdatedAt: Date;
  attempts: number;
  leaseOwner: string | null;
}

export const MAX_PAGE_SIZE = 200;

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The scope and the filter as one WHERE, so every console read and action applies both. */
export function filterCondition(
  eb: ExpressionBuilder<Database, 'tasks'>,
  scope: OperatorScope,
  filter: TaskFilter,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [];
  if (scope.tenant !== null) conditions.push(eb('tenant', '=', scope.tenant));
  if (filter.tenant !== undefined) conditions.push(eb('tenant', '=', filter.tenant));
  if (filter.statuses !== undefined && filter.statuses.length > 0)
    conditions.push(eb('status', 'in', [...filter.statuses]));
  if (filter.tool !== undefined) conditions.push(eb('tool_name', '=', filter.tool));
  if (filter.createdFrom !== undefined) conditions.push(eb('created_at', '>=', filter.createdFrom));
  if (filter.createdTo !== undefined) conditions.push(eb('created_at', '<', filter.createdTo));
  if (filter.search !== undefined && filter.search !== '') {
    const pattern = `%${escapeLike(filter.search)}%`;
    conditions.push(
      sql<SqlBool>`(arguments::text ILIKE ${pattern} OR status_message ILIKE ${pattern})`,
    );
  }
  return eb.and(conditions);
}

function listRow(
  row: Pick<
    TaskRow,
    | 'id'
    | 'tenant'
    | 'principal'
    | 'tool_name'
    | 'status'
    | 'status_message'
    | 'created_at'
    | 'last_updated_at'
    | 'attempts'
    | 'lease_owner'
  >,
): TaskListRow {
  return {
    id: row.id,
    tenant: row.tenant,
    principal: row.principal,
    toolName: row.tool_name,
    status: row.status,
    statusMessage: row.status_message,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    attempts: row.attempts,
    leaseOwner: row.lease_owner,
  };
}

const LIST_COLUMNS = [
  'id',
  'tenant',
  'principal',
  'tool_name',
  'status',
  'status_message',
  'created_at',
  'last_updated_at',
  'attempts',
  'lease_owner',
] as const;

/**
 * Rows a search or tool filter examines per page at most (docs/console.md): its cost is
 * bounded, not its reach.
 */
export const SEARCH_SCAN_ROWS = 20_000;

/** One page of the list; `searchCut`: the search examined SEARCH_SCAN_ROWS rows, more lie older. */
export interface TaskListPage {
  rows: TaskListRow[];
  next?: PageCursor;
  searchCut?: boolean;
}

/**
 * One page, newest first, after `cursor` (keyset on (created_at, id): the indexes of migration
 * 0017 make a page a range scan however deep it is). `next` is the cursor of the following page,
 * absent on the last one.
 *
 * A search is a substring match no index serves (an index on the hot table would cost every
 * create: docs/console.md has the figures), so it is bounded instead: it examines at most
 * SEARCH_SCAN_ROWS rows of the other filters' keyset range per page. When those hold fewer
 * matches than a page, `next` continues from the last row examined (`searchCut`), so an operator
 * pages back through any table size at a bounded cost a page.
 */
export async function listTasksForOperator(
  db: Db,
  scope: OperatorScope,
  filter: TaskFilter,
  page: { cursor?: PageCursor; limit: number; searchScanRows?: number },
): Promise<TaskListPage> {
  const limit = Math.max(1, Math.min(page.limit, MAX_PAGE_SIZE));
  const scanRows = page.searchScanRows ?? SEARCH_SCAN_ROWS;
  // Search and tool have no index of their own (docs/console.md "At size"): both are matched
  // on the bounded scan of the indexed filters' range.
  const { search, tool, ...narrowing } = filter;
  const searching = (search !== undefined && search !== '') || tool !== undefined;
  let query = db
    .selectFrom('tasks')
    .select(LIST_COLUMNS)
    .select(CURSOR_AT.as('cursor_at'))
    .where((eb) => filterCondition(eb, scope, narrowing));
  if (page.cursor !== undefined) {
    const { createdAt, id } = page.cursor;
    query = query.where(sql<SqlBool>`(created_at, id) < (${createdAt}::timestamptz, ${id})`);
  }
  if (!searching) {
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return pageOf(rows, limit);
  }
  const matching: TaskFilter = {
    ...(search === undefined ? {} : { search }),
    ...(tool === undefined ? {} : { tool }),
  };
  const scanned = query
    .select((eb) => [
      sql<boolean>`(${filterCondition(eb, { tenant: null }, matching)})`.as('hit'),
      sql<string>`row_number() OVER (ORDER BY created_at DESC, id DESC)`.as('n'),
    ])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(scanRows);
  const rows = await db
    .selectFrom(scanned.as('scan'))
    .selectAll()
    .where((eb) => eb.or([eb('hit', '=', true), eb('n', '=', String(scanRows))]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 2)
    .execute();
  const matches = rows.filter((row) => row.hit);
  const boundary = rows.find((row) => Number(row.n) === scanRows);
  if (boundary === undefined) return pageOf(matches, limit);
  if (matches.length >= limit) {
    // A full page: the next one goes on after its last row, like any list.
    const shown = matches.slice(0, limit);
    return { rows: shown.map(listRow), next: cursorOf(shown.at(-1)!) };
  }
  return { rows: matches.map(listRow), next: cursorOf(boundary), searchCut: true };
}

type CursorRow = Parameters<typeof listRow>[0] & { cursor_at: string };

const cursorOf = (row: CursorRow): PageCursor => ({ createdAt: row.cursor_at, id: row.id });

function pageOf(rows: CursorRow[], limit: number): TaskListPage {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return rows.length > limit && last !== undefined
    ? { rows: shown.map(listRow), next: cursorOf(last) }
    : { rows: shown.map(listRow) };
}

/**
 * The same rows by id (the live list refreshing what changed), within the scope, each with
 * whether it matches `filter`: a row that stopped matching is still updated where it is shown.
 */
export async function getTaskRowsForOperator(
  db: Db,
  scope: OperatorScope,
  taskIds: readonly string[],
  filter: TaskFilter,
): Promise<(TaskListRow & { matches: boolean })[]> {
  const ids = taskIds.filter(isWellFormedTaskId);
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('tasks')
    .select(LIST_COLUMNS)
    .select((eb) => sql<boolean>`(${filterCondition(eb, { tenant: null }, filter)})`.as('matches'))
    .where('id', 'in', ids)
    .where((eb) => filterCondition(eb, scope, {}))
    .execute();
  return rows.map((row) => ({ ...listRow(row), matches: row.matches }));
}

/** How many tasks an action by this filter would touch (the bulk cancel's preview). */
export async function countTasksForOperator(
  db: Db,
  scope: OperatorScope,
  filter: TaskFilter,
): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where((eb) => filterCondition(eb, scope, filter))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The whole task, if the operator's scope includes it. */
export async function getTaskForOperator(
  db: Db,
  scope: OperatorScope,
  taskId: string,
): Promise<Task | undefined> {
  if (!isWellFormedTaskId(taskId)) return undefined;
  const row = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', taskId)
    .where((eb) => filterCondition(eb, scope, {}))
    .executeTakeFirst();
  return row === undefined ? undefined : taskRowToTask(row);
}
