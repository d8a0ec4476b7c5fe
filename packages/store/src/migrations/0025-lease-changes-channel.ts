import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Workers hear only what they act on (issue 30; docs/adr/0002-notify-only-what-someone-waits-for.md).
 * A worker re-reads a held task for every notification naming it, to learn of a cancel request or
 * of an expiry under its lease. On `mcp_task_changes` it also heard every client-visible change of
 * a task a listen stream flagged — most of them its own checkpoints and pauses — and paid a read
 * for each. Those two announcements now also go on `mcp_task_lease_changes`, the worker's channel;
 * `mcp_task_changes` keeps announcing all three kinds, so gateways, and workers of the release
 * before this one during a rolling deploy, hear what they heard before. A change announced on both
 * (a cancel, an expiry) is rare next to the listened changes that now reach no worker. Both
 * conditions repeat the trigger's WHEN (migration 0008): keep them the same.
 */
export const leaseChangesChannel: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE OR REPLACE FUNCTION tasks_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('mcp_task_changes', NEW.id);
        IF OLD.cancel_requested_at IS DISTINCT FROM NEW.cancel_requested_at
           OR (OLD.lease_owner IS NOT NULL AND NEW.status <> 'working'
               AND NEW.expires_at <= now()) THEN
          PERFORM pg_notify('mcp_task_lease_changes', NEW.id);
        END IF;
        RETURN NULL;
      END
      $$
    `.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE OR REPLACE FUNCTION tasks_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('mcp_task_changes', NEW.id);
        RETURN NULL;
      END
      $$
    `.execute(db);
  },
};
