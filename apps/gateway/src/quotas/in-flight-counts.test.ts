import {
  countTasksInFlight,
  createDb,
  createTask,
  migrateToLatest,
  type Db,
} from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInFlightCounts } from './in-flight-counts.js';

let database: TestDatabase;
let db: Db;
let statements = 0;
let clock = 0;
beforeAll(async () => {
  database = await createTestDatabase('in_flight_counts');
  db = createDb({ connectionString: database.connectionString });
  await migrateToLatest(db);
});
afterAll(async () => {
  await db.destroy();
  await database.drop();
});

async function queue(tenant: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await createTask(db, {
      id: newTaskId(),
      owner: { tenant, principal: 'p' },
      operation: { method: 'tools/call', toolName: 'slow_compute', arguments: { seconds: 1 } },
      ttlMs: 60_000,
      pollIntervalMs: 1_000,
      statusMessage: null,
    });
  }
}

const counts = () =>
  createInFlightCounts({
    count: (tenants, atMost) => {
      statements += 1;
      return countTasksInFlight(db, tenants, atMost);
    },
    atMost: 11,
    refreshMs: 1_000,
    now: () => clock,
  });

describe('tasks in flight per tenant, as one gateway replica knows them', () => {
  it('counts in Postgres, adds what this replica admitted since, and recounts once the count is stale', async () => {
    await queue('acme', 4);
    const inFlight = counts();
    statements = 0;
    expect(await inFlight.current('acme')).toBe(4);
    inFlight.noteAdmitted('acme');
    expect(await inFlight.current('acme')).toBe(5);
    expect(statements).toBe(1);
    // Another replica created three more: seen at the next recount, a refresh later.
    await queue('acme', 3);
    clock += 999;
    expect(await inFlight.current('acme')).toBe(5);
    clock += 1;
    expect(await inFlight.current('acme')).toBe(7);
    expect(statements).toBe(2);
  });

  it('recounts many tenants in one statement, each once however many creates wait for it', async () => {
    await queue('initech', 2);
    await queue('hooli', 1);
    const inFlight = counts();
    statements = 0;
    const seen = await Promise.all([
      inFlight.current('initech'),
      inFlight.current('hooli'),
      inFlight.current('initech'),
      inFlight.current('nobody'),
    ]);
    expect(seen).toEqual([2, 1, 2, 0]);
    expect(statements).toBeLessThanOrEqual(2);
  });

  it('stops counting at the bound: a tenant far over the cap costs no more than one just over it', async () => {
    await queue('globex', 15);
    expect(await counts().current('globex')).toBe(11);
  });
});
