import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Where a task's trace continues (issue #28, docs/tracing.md): `trace_context` is the W3C context
 * the gateway's create ran under (`{traceparent, tracestate?, baggage?}`), written by the create's
 * INSERT, read by every claim, so each attempt on any worker joins the same trace.
 * `trace_last_attempt` is the `traceparent` of the last attempt span a worker started, so a
 * takeover's attempt links the attempt it replaces. Both NULL while tracing is off. Additive and
 * nullable (no table rewrite); an older build neither writes nor reads them.
 */
export const traceContext: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE tasks
        ADD COLUMN trace_context jsonb,
        ADD COLUMN trace_last_attempt text
    `.execute(db);
  },
};
