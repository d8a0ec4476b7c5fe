import type { PageCursor, TaskFilter } from '@mcp-tasks/store';
import { TASK_STATUSES, type TaskStatus } from '@mcp-tasks/tasks';
import type { ListQuery } from './views.js';

/** The list's query string, parsed: the filter for the store and the values to show in the form. */
export interface ParsedListQuery {
  query: ListQuery;
  filter: TaskFilter;
  cursor?: PageCursor;
  /** The query string without the cursor (for links that keep the filter), with its `?`. */
  filterString: string;
}

export class ListQueryError extends Error {}

const MAX_TEXT = 200;

/** `datetime-local` values carry no zone: the console reads and shows times in UTC. */
function parseTime(name: string, value: string): Date | undefined {
  if (value === '') return undefined;
  const date = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(date.getTime()))
    throw new ListQueryError(`${name}: not a date and time ("${value}")`);
  return date;
}

function text(name: string, value: string | undefined): string {
  const trimmed = (value ?? '').trim();
  if (trimmed.length > MAX_TEXT)
    throw new ListQueryError(`${name}: at most ${MAX_TEXT} characters`);
  return trimmed;
}

export function encodeCursor(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

function decodeCursor(value: string): PageCursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    // Microseconds (a millisecond cursor of an older page link reads the same way).
    const isTimestamp =
      typeof at === 'string' &&
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(at) &&
      !Number.isNaN(new Date(at).getTime());
    if (typeof id !== 'string' || !isTimestamp) throw new Error('shape');
    return { createdAt: at, id };
  } catch {
    throw new ListQueryError('after: not a page cursor of this console');
  }
}

export function parseListQuery(params: URLSearchParams): ParsedListQuery {
  const status = params.getAll('status').filter((value) => value !== '');
  const unknown = status.filter((value) => !(TASK_STATUSES as readonly string[]).includes(value));
  if (unknown.length > 0)
    throw new ListQueryError(
      `status: unknown ${unknown.join(', ')} (one of ${TASK_STATUSES.join(', ')})`,
    );
  const query: ListQuery = {
    status,
    tool: text('tool', params.get('tool') ?? undefined),
    tenant: text('tenant', params.get('tenant') ?? undefined),
    from: text('from', params.get('from') ?? undefined),
    to: text('to', params.get('to') ?? undefined),
    q: text('q', params.get('q') ?? undefined),
  };
  const filter: TaskFilter = {
    ...(status.length > 0 ? { statuses: status as TaskStatus[] } : {}),
    ...(query.tool === '' ? {} : { tool: query.tool }),
    ...(query.tenant === '' ? {} : { tenant: query.tenant }),
    ...(query.q === '' ? {} : { search: query.q }),
  };
  const from = parseTime('from', query.from);
  const to = parseTime('to', query.to);
  if (from !== undefined) filter.createdFrom = from;
  if (to !== undefined) filter.createdTo = to;
  const after = params.get('after');
  const kept = new URLSearchParams();
  for (const value of status) kept.append('status', value);
  for (const name of ['tool', 'tenant', 'from', 'to', 'q'] as const)
    if (query[name] !== '') kept.set(name, query[name]);
  const filterString = kept.size === 0 ? '' : `?${kept.toString()}`;
  return {
    query,
    filter,
    filterString,
    ...(after === null || after === '' ? {} : { cursor: decodeCursor(after) }),
  };
}

/** The filter in words, for the bulk cancel's confirmation. */
export function describeFilter(query: ListQuery): string {
  const parts: string[] = [];
  if (query.status.length > 0) parts.push(`status ${query.status.join(' or ')}`);
  if (query.tool !== '') parts.push(`tool ${query.tool}`);
  if (query.tenant !== '') parts.push(`tenant ${query.tenant}`);
  if (query.from !== '') parts.push(`created from ${query.from} UTC`);
  if (query.to !== '') parts.push(`created before ${query.to} UTC`);
  if (query.q !== '') parts.push(`matching "${query.q}"`);
  return parts.length === 0 ? 'every task you can see' : parts.join(', ');
}
