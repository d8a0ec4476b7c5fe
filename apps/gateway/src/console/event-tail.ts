import type { ConsoleService, EventMark } from '@mcp-tasks/store';
import type { Logger } from 'pino';

/**
 * The console's live feed: every committed change of every task, whichever replica or worker
 * made it, read from `task_events` (the history is the change feed). Not LISTEN/NOTIFY: the
 * tasks trigger notifies only what a listen stream flagged (ADR 0002), and a NOTIFY per change
 * would put every write back behind Postgres's commit-time notify lock. One poll per gateway
 * while at least one console page is open, none otherwise; each poll is an index range read.
 *
 * Identity values are taken before commit, so a slow transaction's event may appear below the
 * mark after a later one was read: each poll re-reads a window of ids behind the mark and skips
 * the ids it has already delivered.
 */
export interface EventTail {
  subscribe(onEvents: (marks: readonly EventMark[]) => void): () => void;
  close(): void;
}

const REREAD_WINDOW = 512n;
const PAGE = 2_000;

export function createEventTail(options: {
  console: Pick<ConsoleService, 'lastEventId' | 'readEventsAfter'>;
  intervalMs: number;
  logger: Logger;
}): EventTail {
  const listeners = new Set<(marks: readonly EventMark[]) => void>();
  let mark: bigint | undefined;
  const delivered = new Set<bigint>();
  let closed = false;

  const poll = async (): Promise<void> => {
    if (mark === undefined) {
      // What is already there is history, not news: remember it without delivering it.
      const start = await options.console.lastEventId();
      const low = start > REREAD_WINDOW ? start - REREAD_WINDOW : 0n;
      for (const event of await options.console.readEventsAfter(low, PAGE)) delivered.add(event.id);
      mark = start;
      return;
    }
    const low = mark > REREAD_WINDOW ? mark - REREAD_WINDOW : 0n;
    const events = await options.console.readEventsAfter(low, PAGE);
    const fresh = events.filter((event) => !delivered.has(event.id));
    for (const event of fresh) {
      delivered.add(event.id);
      if (event.id > mark) mark = event.id;
    }
    const floor = mark - REREAD_WINDOW;
    for (const id of delivered) if (id <= floor) delivered.delete(id);
    if (fresh.length > 0) for (const listener of [...listeners]) listener(fresh);
  };

  let running = false;
  const run = async (): Promise<void> => {
    running = true;
    // A tail idle for a while starts again from now, not from where it stopped.
    mark = undefined;
    delivered.clear();
    try {
      while (!closed && listeners.size > 0) {
        await poll().catch((error: unknown) =>
          options.logger.warn({ err: error }, 'console event tail failed'),
        );
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs).unref());
      }
    } finally {
      running = false;
    }
  };

  return {
    subscribe(onEvents) {
      listeners.add(onEvents);
      if (!running) void run();
      return () => {
        listeners.delete(onEvents);
      };
    },
    close() {
      closed = true;
      listeners.clear();
    },
  };
}
