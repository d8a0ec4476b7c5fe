import { createDb, createTaskService, type Db } from '@mcp-tasks/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoadQueue, type LoadQueue } from '../src/mcp/listen-limits.js';
import { createListenStatements } from '../src/mcp/listen-statements.js';
import { useGatewayUnderTest } from './support/harness.js';
import { createReportTask } from './support/rpc.js';

/** The listen statements a replica's streams share, on real Postgres. */
const { infra, gw } = useGatewayUnderTest('gw_listen_statements');
const alice = { tenant: 'acme', principal: 'alice' };
const bob = { tenant: 'acme', principal: 'bob' };

/** A task service on a pool that records every statement it sends. */
let counted: { db: Db; statements: string[] };
beforeAll(() => {
  const statements: string[] = [];
  counted = {
    statements,
    db: createDb({
      connectionString: infra.database.connectionString,
      max: 4,
      log: (event) => {
        if (event.level === 'query') statements.push(event.query.sql);
      },
    }),
  };
});
afterAll(async () => {
  await counted.db.destroy();
});

function statementsOnCountedStore(loadQueue: LoadQueue = createLoadQueue(4)) {
  counted.statements.length = 0;
  return createListenStatements(
    createTaskService({ db: counted.db, wakeUpQueue: infra.queue }),
    loadQueue,
  );
}

const listenedUntil = async (taskId: string) =>
  (
    await infra.db
      .selectFrom('tasks')
      .select('listened_until')
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow()
  ).listened_until;

describe('the listen statements of a replica', () => {
  it('flags the tasks of streams opening in the same turn with one statement, each owner its own', async () => {
    const statements = statementsOnCountedStore();
    const mine = await createReportTask(gw.app);
    const bobs = await createReportTask(gw.app, { as: 'bob' });
    const othersAsked = await createReportTask(gw.app, { as: 'bob' });
    const [forAlice, forBob] = await Promise.all([
      statements.flag(alice, [mine, othersAsked], 60_000),
      statements.flag(bob, [bobs], 60_000),
    ]);
    expect(counted.statements).toHaveLength(1);
    // Each gets the tasks flagged for it, as they are at the flag's commit.
    expect(forAlice).toMatchObject([{ id: mine, status: 'working' }]);
    expect(forBob).toMatchObject([{ id: bobs, status: 'working' }]);
    expect(await listenedUntil(mine)).not.toBeNull();
    expect(await listenedUntil(bobs)).not.toBeNull();
    // Alice named bob's task: not hers, so not flagged.
    expect(await listenedUntil(othersAsked)).toBeNull();
  });

  it('loads the tasks of streams asking in the same turn with one statement, each getting only its own, in the order named', async () => {
    const statements = statementsOnCountedStore();
    const first = await createReportTask(gw.app);
    const second = await createReportTask(gw.app);
    const bobs = await createReportTask(gw.app, { as: 'bob' });
    const [forAlice, forBob, forAliceAgain] = await Promise.all([
      statements.load(alice, [second, bobs, 'tsk_doesnotexistdoesnotexist', first]),
      statements.load(bob, [bobs, first]),
      statements.load(alice, [first]),
    ]);
    expect(counted.statements).toHaveLength(1);
    expect(forAlice.map((view) => view.id)).toEqual([second, first]);
    expect(forBob.map((view) => view.id)).toEqual([bobs]);
    expect(forAliceAgain).toMatchObject([{ id: first, status: 'working' }]);
  });

  it('sends the loads asked while one is in flight together in the next statement', async () => {
    // The queue holds the first statement until the later loads were asked.
    let open = (): void => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const queue = createLoadQueue(4);
    const statements = statementsOnCountedStore((load) =>
      queue(async () => {
        await opened;
        return await load();
      }),
    );
    const taskIds = await Promise.all([1, 2, 3, 4].map(() => createReportTask(gw.app)));
    const [firstId, ...laterIds] = taskIds as [string, ...string[]];
    const firstLoad = statements.load(alice, [firstId]);
    await new Promise((resolve) => setImmediate(resolve));
    const later = laterIds.map((taskId) => statements.load(alice, [taskId]));
    open();
    const loaded = await Promise.all([firstLoad, ...later]);
    expect(loaded.map((views) => views.map((view) => view.id))).toEqual(
      taskIds.map((taskId) => [taskId]),
    );
    expect(counted.statements).toHaveLength(2);
  });
});
