/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import { createSseStream } from '../../sse.js';
import { parseListQuery, type ParsedListQuery } from '../list-query.js';
import { TaskRowView } from '../views.js';
import { badQuery, render, type ConsoleApp, type ConsoleDeps } from './shared.js';

/** Live console pages open at once on one gateway; one more is answered 503. */
export const MAX_CONSOLE_STREAMS = 100;
const LIVE_ROWS_PER_BATCH = 200;

/**
 * GET /live: the event stream behind the live pages. A task page is told its task changed; the
 * list gets the changed rows, rendered, with whether each still matches its filter.
 */
export function addLiveRoute(app: ConsoleApp, deps: ConsoleDeps): void {
  const { service, logger, now, options } = deps;
  let openStreams = 0;

  app.get('/live', async (c) => {
    const session = c.get('session');
    const scope = { tenant: session.operator.tenant };
    const params = new URL(c.req.url).searchParams;
    const watchedTask = params.get('task');
    let parsed: ParsedListQuery;
    try {
      parsed = parseListQuery(params);
    } catch (error) {
      return await badQuery(c, error);
    }
    if (openStreams >= MAX_CONSOLE_STREAMS)
      return c.text('too many live console pages on this gateway; retry shortly', 503, {
        'Retry-After': '5',
      });
    openStreams++;
    const stream = createSseStream({ keepAliveMs: options.keepAliveMs });
    const unsubscribe = options.tail.subscribe((marks) => {
      const visible = marks.filter((mark) => scope.tenant === null || mark.tenant === scope.tenant);
      if (watchedTask !== null) {
        if (visible.some((mark) => mark.taskId === watchedTask)) stream.send({ task: watchedTask });
        return;
      }
      const ids = [...new Set(visible.map((mark) => mark.taskId))].slice(-LIVE_ROWS_PER_BATCH);
      if (ids.length === 0) return;
      void service
        .getTaskRows(scope, ids, parsed.filter)
        .then(async (rows) => {
          const at = now();
          const rendered = await Promise.all(
            rows.map(async (row) => ({
              id: row.id,
              matches: row.matches,
              createdAt: row.createdAt.toISOString(),
              html: await render(<TaskRowView row={row} now={at} />),
            })),
          );
          if (rendered.length > 0) stream.send({ rows: rendered });
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'console live rows failed'));
    });
    const closeOnDrain = (): void => stream.close();
    options.shutdownSignal.addEventListener('abort', closeOnDrain, { once: true });
    stream.onClose(() => {
      openStreams--;
      unsubscribe();
      options.shutdownSignal.removeEventListener('abort', closeOnDrain);
    });
    stream.send({ ready: true });
    return stream.response;
  });
}
