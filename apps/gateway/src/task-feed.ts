import { createTaskChangeListener, type TaskChangeListener } from '@mcp-tasks/store';
import type { Logger } from 'pino';

/**
 * Committed task changes from every replica and worker, fanned out to this process's listen
 * streams. `onResync` fires after the LISTEN connection was re-established: notifications sent
 * while it was down are lost, so subscribers refetch what they watch.
 */
export interface TaskChangeFeed {
  subscribe(onChange: (taskId: string) => void, onResync: () => void): () => void;
}

export interface ClosableTaskChangeFeed extends TaskChangeFeed {
  close(): Promise<void>;
}

export function taskChangeFeedFrom(listener: Pick<TaskChangeListener, 'subscribe'>): {
  feed: TaskChangeFeed;
  resync: () => void;
} {
  const resyncHandlers = new Set<() => void>();
  return {
    feed: {
      subscribe(onChange, onResync) {
        const unsubscribe = listener.subscribe(onChange);
        resyncHandlers.add(onResync);
        return () => {
          unsubscribe();
          resyncHandlers.delete(onResync);
        };
      },
    },
    resync: () => {
      for (const handler of [...resyncHandlers]) handler();
    },
  };
}

export async function createTaskChangeFeed(options: {
  connectionString: string;
  logger: Logger;
}): Promise<ClosableTaskChangeFeed> {
  let resync: () => void = () => undefined;
  const listener = await createTaskChangeListener({
    connectionString: options.connectionString,
    onError: (error) => options.logger.warn({ err: error }, 'task change listener error'),
    onReconnect: () => {
      options.logger.info('task change listener reconnected; listen streams resync');
      resync();
    },
  });
  const wrapped = taskChangeFeedFrom(listener);
  resync = wrapped.resync;
  return {
    subscribe: (onChange, onResync) => wrapped.feed.subscribe(onChange, onResync),
    close: () => listener.close(),
  };
}
