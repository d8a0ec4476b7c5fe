import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedis, type TestDatabase } from './services.js';

describe('test services', () => {
  const created: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of created) await db.drop();
  });

  it('gives each caller its own empty database, and drops it', async () => {
    const [a, b] = await Promise.all([createTestDatabase('smoke'), createTestDatabase('smoke')]);
    created.push(a, b);
    expect(a.name).not.toBe(b.name);
    const client = new pg.Client({ connectionString: a.connectionString });
    await client.connect();
    const { rows } = await client.query<{ db: string }>('select current_database() as db');
    await client.end();
    expect(rows[0]?.db).toBe(a.name);

    await a.drop();
    const admin = new pg.Client({ connectionString: b.connectionString });
    await admin.connect();
    const left = await admin.query('select 1 from pg_database where datname = $1', [a.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
  });

  it('gives each caller a distinct Redis key prefix', async () => {
    const [a, b] = await Promise.all([createTestRedis('x'), createTestRedis('x')]);
    expect(a.url).toMatch(/^redis:\/\//);
    expect(a.prefix).not.toBe(b.prefix);
  });
});
