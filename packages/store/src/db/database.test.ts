import { createServer, type Server, type Socket } from 'node:net';
import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStoreFixture, type StoreFixture } from '../../test/helpers.js';
import { createDb } from './database.js';

let fixture: StoreFixture;
beforeAll(async () => {
  fixture = await createStoreFixture('database');
});
afterAll(() => fixture.close());

describe('createDb bounds every wait', () => {
  it('cancels a statement that runs past statementTimeoutMs (57014) and keeps working', async () => {
    const db = createDb({
      connectionString: fixture.database.connectionString,
      max: 1,
      statementTimeoutMs: 200,
    });
    try {
      await expect(sql`SELECT pg_sleep(5)`.execute(db)).rejects.toMatchObject({ code: '57014' });
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('applies a 10 s statement timeout by default', async () => {
    const db = createDb({ connectionString: fixture.database.connectionString, max: 1 });
    try {
      const { rows } = await sql<{
        value: string;
      }>`SELECT current_setting('statement_timeout') AS value`.execute(db);
      expect(rows).toEqual([{ value: '10s' }]);
    } finally {
      await db.destroy();
    }
  });

  it('gives up connecting to a server that accepts but never answers', async () => {
    const sockets: Socket[] = [];
    const server: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const db = createDb({
      connectionString: `postgres://nobody@127.0.0.1:${port}/nothing`,
      max: 1,
      connectionTimeoutMs: 300,
    });
    try {
      await expect(sql`SELECT 1`.execute(db)).rejects.toThrow(/timeout/i);
    } finally {
      await db.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 10_000);
});

describe('createDb keeps its connections through a lull', () => {
  const backends = async (applicationName: string): Promise<number> => {
    const { rows } = await sql<{ count: number }>`
      SELECT count(*)::int AS count FROM pg_stat_activity WHERE application_name = ${applicationName}
    `.execute(fixture.db);
    return rows[0]!.count;
  };
  const openThree = async (applicationName: string, idleTimeoutMs?: number) => {
    const db = createDb({
      connectionString: fixture.database.connectionString,
      max: 3,
      applicationName,
      ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
    });
    // Three statements at once make the pool open three connections.
    await Promise.all([1, 2, 3].map(() => sql`SELECT pg_sleep(0.05)`.execute(db)));
    return db;
  };

  it('still holds every connection 15 s after the last statement by default', async () => {
    const applicationName = `idle-default-${process.pid}`;
    // Faked before the pool arms its idle timers, so the lull can be skipped rather than waited.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const db = await openThree(applicationName);
    try {
      expect(await backends(applicationName)).toBe(3);
      vi.advanceTimersByTime(15_000);
      vi.useRealTimers();
      await sleep(100);
      expect(await backends(applicationName)).toBe(3);
    } finally {
      vi.useRealTimers();
      await db.destroy();
    }
  });

  it('closes idle connections after idleTimeoutMs', async () => {
    const applicationName = `idle-short-${process.pid}`;
    // 2 s, not less: on a starved machine the count below can come a good second after the
    // statements, and a shorter timeout had closed connections before it (seen in CI).
    const db = await openThree(applicationName, 2_000);
    try {
      expect(await backends(applicationName)).toBe(3);
      await vi.waitFor(async () => expect(await backends(applicationName)).toBe(0), {
        timeout: 10_000,
        interval: 50,
      });
    } finally {
      await db.destroy();
    }
  });
});
