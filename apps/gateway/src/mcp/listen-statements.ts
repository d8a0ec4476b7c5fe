import { createNaturalBatcher, type ListenFlagRequest, type TaskService } from '@mcp-tasks/store';
import type { TaskOwner, TaskView } from '@mcp-tasks/tasks';
import type { LoadQueue } from './listen-limits.js';

/**
 * Streams served by one statement at most (each names up to MCP_LISTEN_MAX_TASK_IDS ids), so a
 * LISTEN reconnect that reloads every stream sends statements of bounded size, one after another.
 */
const MAX_STREAMS_PER_STATEMENT = 64;

/**
 * The replica's listen statements, shared by all its streams: on these machines each statement's
 * round trip costs more CPU than what it reads, so streams that ask together share one.
 */
export interface ListenStatements {
  /**
   * Flags the owner's tasks for `ttlMs` (TaskService.flagListened); resolves once committed, with
   * the tasks it flagged as they are at that commit (every later change of them is announced).
   */
  flag(owner: TaskOwner, taskIds: readonly string[], ttlMs: number): Promise<TaskView[]>;
  /** The owner's tasks among `taskIds` as the owner sees them, in the order named, from the primary. */
  load(owner: TaskOwner, taskIds: readonly string[]): Promise<TaskView[]>;
}

/**
 * Each kind is batched naturally (natural-batcher.ts): a request sent while nothing of its kind
 * is in flight goes at once (with every other of the same turn: the changes one NOTIFY batch
 * announced, streams opening together), the rest wait for it and share the next statement. So a
 * replica has at most one flag and one load statement in flight, both through the bounded load
 * queue, however many streams are open; and a stream's loads, one at a time, read ever later
 * snapshots (each goes in a statement that starts after the previous one ended).
 * The owner check stays in SQL: a stream is handed only rows its owner may see.
 */
export function createListenStatements(
  taskService: Pick<TaskService, 'flagListened' | 'getTaskViewsFromPrimary'>,
  loadQueue: LoadQueue,
): ListenStatements {
  const flag = createNaturalBatcher<ListenFlagRequest, TaskView[]>({
    maxBatchSize: MAX_STREAMS_PER_STATEMENT,
    run: async (requests) => {
      const flagged = await loadQueue(() => taskService.flagListened(requests));
      return flagged.map((views) => ({ ok: true, value: views }));
    },
  });
  const load = createNaturalBatcher<{ owner: TaskOwner; taskIds: readonly string[] }, TaskView[]>({
    maxBatchSize: MAX_STREAMS_PER_STATEMENT,
    run: async (requests) => {
      const keys = requests.flatMap(({ owner, taskIds }) =>
        taskIds.map((taskId) => ({ tenant: owner.tenant, principal: owner.principal, taskId })),
      );
      const views = await loadQueue(() => taskService.getTaskViewsFromPrimary(keys));
      // One answer per key, in order: each request takes its own slice.
      let next = 0;
      return requests.map(({ taskIds }) => {
        const mine = views.slice(next, next + taskIds.length);
        next += taskIds.length;
        return { ok: true, value: mine.filter((view) => view !== undefined) };
      });
    },
  });
  return {
    flag: (owner, taskIds, ttlMs) => flag({ owner, taskIds, ttlMs }),
    load: (owner, taskIds) => load({ owner, taskIds }),
  };
}
