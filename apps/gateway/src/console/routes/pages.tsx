/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import { SEARCH_SCAN_ROWS } from '@mcp-tasks/store';
import { encodeCursor, parseListQuery, type ParsedListQuery } from '../list-query.js';
import { HealthPage, ListPage } from '../views.js';
import { badQuery, taskPage, type ConsoleApp, type ConsoleDeps } from './shared.js';

const PAGE_SIZE = 50;

/** The read-only pages: the task list (filtered, paged), one task, and health. */
export function addPageRoutes(app: ConsoleApp, deps: ConsoleDeps): void {
  const { service, now, options } = deps;

  app.get('/', async (c) => {
    const session = c.get('session');
    let parsed: ParsedListQuery;
    try {
      parsed = parseListQuery(new URL(c.req.url).searchParams);
    } catch (error) {
      return await badQuery(c, error);
    }
    const scope = { tenant: session.operator.tenant };
    const page = await service.listTasks(scope, parsed.filter, {
      limit: PAGE_SIZE,
      ...(parsed.cursor === undefined ? {} : { cursor: parsed.cursor }),
    });
    const sep = parsed.filterString === '' ? '?' : '&';
    return c.html(
      <ListPage
        session={session}
        query={parsed.query}
        queryString={parsed.filterString}
        rows={page.rows}
        firstPage={parsed.cursor === undefined}
        searchCut={
          page.searchCut === true && page.next !== undefined
            ? { scanned: SEARCH_SCAN_ROWS, to: new Date(page.next.createdAt) }
            : undefined
        }
        now={now()}
        {...(page.next === undefined
          ? {}
          : { nextHref: `/console${parsed.filterString}${sep}after=${encodeCursor(page.next)}` })}
      />,
    );
  });

  app.get('/tasks/:id', (c) => taskPage(deps, c, c.req.param('id')));

  app.get('/health', async (c) => {
    const session = c.get('session');
    const scope = { tenant: session.operator.tenant };
    const [health, throughput, latency, workers] = await Promise.all([
      service.health(scope),
      service.throughput(scope),
      service.latency(scope),
      options.workers?.().catch(() => ({ status: 'unknown' })),
    ]);
    return c.html(
      <HealthPage
        session={session}
        health={health}
        workers={workers}
        now={now()}
        throughput={throughput}
        latency={latency}
        settings={{ taskTtlMs: options.taskTtlMs }}
      />,
    );
  });
}
