import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The per-tenant cap on tasks in flight (TENANT_MAX_IN_FLIGHT) is counted in Postgres, so every
 * gateway replica sees the same number: this index makes that count an index-only range scan of
 * the tenant's own unfinished tasks (tenant-load.ts), never a walk over other tenants' rows or the
 * terminal ones kept for their retention.
 */
export const inFlightByTenant: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE INDEX tasks_in_flight_by_tenant ON tasks (tenant)
      WHERE status IN ('working', 'input_required')
    `.execute(db);
  },
};
