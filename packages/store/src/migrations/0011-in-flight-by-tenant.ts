import { sql, type Kysely } from 'kysely';
import { createIndexConcurrently, type StoreMigration } from './online.js';

/**
 * The per-tenant cap on tasks in flight (TENANT_MAX_IN_FLIGHT) is counted in Postgres, so every
 * gateway replica sees the same number: this index makes that count an index-only range scan of
 * the tenant's own unfinished tasks (tenant-load.ts), never a walk over other tenants' rows or the
 * terminal ones kept for their retention. Built concurrently: writes go on (issue 25).
 */
export const inFlightByTenant: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    await createIndexConcurrently(
      db,
      'tasks_in_flight_by_tenant',
      sql`ON tasks (tenant) WHERE status IN ('working', 'input_required')`,
    );
  },
};
