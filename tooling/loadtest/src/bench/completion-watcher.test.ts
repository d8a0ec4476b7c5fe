import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCompletionWatcher } from './completion-watcher.js';
import { xactCommits } from './end-to-end.js';

const committed = (database: TestDatabase) => xactCommits(database.connectionString, database.name);

describe('the completion watcher', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('completion_watcher');
    const client = new pg.Client({ connectionString: database.connectionString });
    await client.connect();
    await client.query('CREATE TABLE tasks (id text PRIMARY KEY, status text NOT NULL)');
    await client.query(`INSERT INTO tasks VALUES ('t1', 'working')`);
    await client.end();
  });
  afterAll(() => database.drop());

  it('has Postgres count every query it made once flushStats resolves, though it went idle at once', async () => {
    const baseline = await committed(database);
    const watcher = startCompletionWatcher(database.connectionString);
    try {
      const ended = watcher.waitFor('t1');
      // It polls every 10 ms for 300 ms, then the task ends and the watcher goes idle: within a
      // second of its first flush, so its backend holds the other polls' counts for 10 s.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const client = new pg.Client({ connectionString: database.connectionString });
      await client.connect();
      await client.query(`UPDATE tasks SET status = 'completed' WHERE id = 't1'`);
      await client.end();
      await ended;
      await watcher.flushStats();
      // Besides the watcher's queries (flushStats' own included): the baseline's read and the
      // UPDATE, each flushed as its connection closed.
      expect(watcher.queries()).toBeGreaterThan(10);
      expect((await committed(database)) - baseline).toBeGreaterThanOrEqual(watcher.queries() + 2);
    } finally {
      await watcher.stop();
    }
  });
});
