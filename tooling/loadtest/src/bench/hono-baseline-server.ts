import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pg from 'pg';

/**
 * The baselines for `tasks/get`: a bare Hono app on the same adapter as the gateway
 * (@hono/node-server), answering a JSON-RPC-shaped POST (a) from memory and (b) from a
 * primary-key read in Postgres, through a pool the size of the gateway's (10).
 * Started as its own process by the bench: PORT and DATABASE_URL.
 */
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = new Hono();

app.get('/healthz', (c) => c.json({ status: 'ok' }));
app.post('/json', async (c) => {
  const body = await c.req.json<{ id: unknown }>();
  return c.json({ jsonrpc: '2.0', id: body.id, result: { status: 'working' } });
});
app.post('/pg', async (c) => {
  const body = await c.req.json<{ id: unknown; params: { taskId: string } }>();
  const { rows } = await pool.query<{ id: string; status: string; payload: unknown }>(
    'SELECT id, status, payload FROM bench_read WHERE id = $1',
    [body.params.taskId],
  );
  return c.json({ jsonrpc: '2.0', id: body.id, result: rows[0] ?? null });
});

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
});
