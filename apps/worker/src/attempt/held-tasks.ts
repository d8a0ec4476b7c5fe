import type { Fence } from '@mcp-tasks/store';

/**
 * Why a running step was told to stop; the runner settles the task according to it. `lease lost`:
 * someone else holds it now. `lease unconfirmed`: Postgres stopped confirming our renewals (an
 * outage, or we are cut off), so we may no longer assume we hold it, but nobody may have claimed.
 */
export type AbortReason = 'cancel' | 'lease lost' | 'lease unconfirmed' | 'shutdown';

export interface HeldTask {
  fence: Fence;
  controller: AbortController;
}

/** The tasks this process holds a lease on, so signals from outside (cancel, shutdown) reach their steps. */
export interface HeldTasks {
  add(fence: Fence, controller: AbortController): () => void;
  get(taskId: string): HeldTask | undefined;
  abort(taskId: string, reason: AbortReason): void;
  abortAll(reason: AbortReason): void;
  ids(): string[];
  size(): number;
}

export function abortWith(controller: AbortController, reason: AbortReason): void {
  // The first reason stands: a cancel that arrives after the lease was lost must not make the
  // runner write a cancellation it no longer has the right to write.
  if (!controller.signal.aborted) controller.abort(reason);
}

export function createHeldTasks(): HeldTasks {
  const held = new Map<string, HeldTask>();
  return {
    add(fence, controller) {
      const entry = { fence, controller };
      held.set(fence.taskId, entry);
      return () => {
        if (held.get(fence.taskId) === entry) held.delete(fence.taskId);
      };
    },
    get: (taskId) => held.get(taskId),
    abort(taskId, reason) {
      const entry = held.get(taskId);
      if (entry !== undefined) abortWith(entry.controller, reason);
    },
    abortAll(reason) {
      for (const entry of held.values()) abortWith(entry.controller, reason);
    },
    ids: () => [...held.keys()],
    size: () => held.size,
  };
}
