import { createNaturalBatcher } from '@mcp-tasks/store';

/**
 * Each tenant's tasks in flight as Postgres counts them (so every gateway replica sees the same
 * number), recounted at most once per `refreshMs` per tenant on this replica: the create that
 * finds the count stale waits for the recount (one statement for every tenant recounted at
 * once), the others use it. What this replica admitted since is added on top, so a replica never
 * overshoots on its own; across replicas the cap may be passed by what the others admit within
 * one refresh, which the tenant's create rate bounds.
 */
export interface InFlightCounts {
  /** The tenant's tasks in flight as this replica knows them now. */
  current(tenant: string): Promise<number>;
  /** One more task admitted for the tenant on this replica. */
  noteAdmitted(tenant: string): void;
}

export interface InFlightCountsOptions {
  /** One statement for many tenants, each count stopping at `atMost` (countTasksInFlight). */
  count(tenants: readonly string[], atMost: number): Promise<Map<string, number>>;
  /** Counts above this are not needed exactly: the cap plus one. */
  atMost: number;
  refreshMs: number;
  /** A tenant unseen this long is forgotten (memory stays bounded by active tenants). */
  forgetAfterMs?: number;
  /** A count failed (the database is down or slow): the last count stands until the next. */
  onError?(error: unknown): void;
  /** After each count: the highest among the tenants this replica knows (for the metrics). */
  onCounted?(highest: number): void;
  now?: () => number;
}

interface Entry {
  counted: number;
  countedAt: number;
  /** Admitted here since the count in `counted` was sent. */
  admittedSince: number;
  /** Admitted here since the recount now running was sent (it may or may not see them). */
  admittedDuringCount: number;
  recount: Promise<void> | undefined;
  lastUsed: number;
}

export function createInFlightCounts(options: InFlightCountsOptions): InFlightCounts {
  const now = options.now ?? Date.now;
  const forgetAfterMs = options.forgetAfterMs ?? 60_000;
  const entries = new Map<string, Entry>();
  const countOne = createNaturalBatcher<string, number>({
    maxBatchSize: 500,
    run: async (tenants) => {
      const counts = await options.count(tenants, options.atMost);
      return tenants.map((tenant) => ({ ok: true, value: counts.get(tenant) ?? 0 }));
    },
  });

  async function recount(tenant: string, entry: Entry): Promise<void> {
    entry.admittedDuringCount = 0;
    const sentAt = now();
    let counted: number;
    try {
      counted = await countOne(tenant);
    } catch (error) {
      // The create itself meets the same database next and answers for it; until the next
      // refresh this tenant is held to its last count (and what was admitted since).
      entry.countedAt = sentAt;
      options.onError?.(error);
      return;
    }
    entry.counted = counted;
    entry.countedAt = sentAt;
    // Admissions made while the count ran are kept: at worst counted twice, never missed.
    entry.admittedSince = entry.admittedDuringCount;
    let highest = 0;
    for (const [name, other] of entries) {
      if (other.lastUsed < now() - forgetAfterMs && other.recount === undefined)
        entries.delete(name);
      else highest = Math.max(highest, other.counted + other.admittedSince);
    }
    options.onCounted?.(highest);
  }

  function entryOf(tenant: string): Entry {
    let entry = entries.get(tenant);
    if (entry === undefined) {
      entry = {
        counted: 0,
        countedAt: -Infinity,
        admittedSince: 0,
        admittedDuringCount: 0,
        recount: undefined,
        lastUsed: now(),
      };
      entries.set(tenant, entry);
    }
    return entry;
  }

  return {
    async current(tenant) {
      const entry = entryOf(tenant);
      entry.lastUsed = now();
      if (now() - entry.countedAt >= options.refreshMs) {
        entry.recount ??= recount(tenant, entry).finally(() => {
          entry.recount = undefined;
        });
        await entry.recount;
      }
      return entry.counted + entry.admittedSince;
    },
    noteAdmitted(tenant) {
      const entry = entryOf(tenant);
      entry.admittedSince += 1;
      entry.admittedDuringCount += 1;
    },
  };
}
