import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * Each tenant's tasks in flight (`working` or `input_required`: accepted and not finished), for
 * the per-tenant cap. One statement for many tenants; each count stops at `atMost`, so a tenant
 * far over its cap costs no more to count than one just over it (migration 0011's index).
 */
export async function countTasksInFlight(
  db: Db,
  tenants: readonly string[],
  atMost: number,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (tenants.length === 0) return counts;
  const result = await sql<{ tenant: string; in_flight: string }>`
    SELECT t.tenant, (
      SELECT count(*) FROM (
        SELECT 1 FROM tasks
        WHERE tasks.tenant = t.tenant AND status IN ('working', 'input_required')
        LIMIT ${atMost}
      ) AS capped
    ) AS in_flight
    FROM unnest(${[...new Set(tenants)]}::text[]) AS t(tenant)
  `.execute(db);
  for (const row of result.rows) counts.set(row.tenant, Number(row.in_flight));
  return counts;
}
