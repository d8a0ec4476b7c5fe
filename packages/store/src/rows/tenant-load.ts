import type { Db } from '../db/database.js';
import { inFlightByTenantStatement } from '../sql/tasks.js';

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
  const result = await inFlightByTenantStatement({
    atMost,
    tenants: [...new Set(tenants)],
  }).execute(db);
  for (const row of result.rows) counts.set(row.tenant, Number(row.in_flight));
  return counts;
}
