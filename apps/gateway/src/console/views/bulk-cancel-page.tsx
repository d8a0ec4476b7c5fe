/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { ConsoleSession } from '../session.js';
import { Layout } from './layout.js';

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
