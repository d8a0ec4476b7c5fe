import {
  ErrorCode,
  ListenParamsSchema,
  ProtocolError,
  buildSubscriptionEnd,
  buildSubscriptionsAcknowledged,
  buildTaskStatusNotification,
  jsonRpcError,
  jsonRpcResult,
  listenRequiresTasksExtension,
  parseParams,
  type Implementation,
  type RequestId,
  assertTasksExtension,
} from '@mcp-tasks/protocol';
import {
  buildTaskSnapshot,
  isTerminalStatus,
  isWellFormedTaskId,
  type TaskView,
} from '@mcp-tasks/tasks';
import { infrastructureFailure } from '@mcp-tasks/store';
import { STORE_RETRY_AFTER_MS } from '../errors.js';
import { createSseStream, type SseStream } from '../sse.js';
import type { HandlerOutcome, McpServices, MethodHandler, RequestContext } from './context.js';
import type { ListenLimits } from './listen-limits.js';

/** The listen's params, checked: the Tasks extension when it names tasks, at most maxTaskIds. */
function parseListenRequest(
  ctx: RequestContext,
  limits: ListenLimits,
): { requested: string[]; namesTasks: boolean } {
  const params = parseParams(ListenParamsSchema, ctx.params);
  if (listenRequiresTasksExtension(params))
    assertTasksExtension(ctx.meta, 'subscriptions/listen with taskIds');
  const requested = [...new Set(params.notifications.taskIds ?? [])];
  if (requested.length > limits.maxTaskIds) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `Too many taskIds: at most ${limits.maxTaskIds} per subscriptions/listen (MCP_LISTEN_MAX_TASK_IDS)`,
      { limit: limits.maxTaskIds },
    );
  }
  return { requested, namesTasks: params.notifications.taskIds !== undefined };
}

/**
 * What changed among the watched tasks since the pump last looked, and the pump's wake-up: a
 * change, a listener reconnect (every snapshot again), the stream closing or the replica shutting
 * down each wake it.
 */
class ChangeInbox {
  readonly changed = new Set<string>();
  resyncAll = false;
  #wake: (() => void) | undefined;

  constructor(private readonly watching: ReadonlySet<string>) {}

  readonly onChange = (taskId: string): void => {
    if (!this.watching.has(taskId)) return;
    this.changed.add(taskId);
    this.wake();
  };

  readonly onResync = (): void => {
    this.resyncAll = true;
    this.wake();
  };

  wake(): void {
    this.#wake?.();
  }

  get empty(): boolean {
    return this.changed.size === 0 && !this.resyncAll;
  }

  /** Until the next wake. */
  async waitForWork(): Promise<void> {
    await new Promise<void>((resolve) => (this.#wake = resolve));
    this.#wake = undefined;
  }

  /** Until `ms` have passed or the next wake, whichever is first. */
  async waitToRetry(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }
}

/**
 * Flags the watched tasks and reads them: the caller's own (the owner check is in both
 * statements), in the order the client named them. Only flagged tasks announce their changes
 * (ADR 0002). The flag answers the tasks it wrote as they are at its commit, and reads the rest
 * (flagged already, or terminal) after that commit: either way a change is in that first
 * snapshot or announced after it.
 */
async function loadAcceptedTasks(
  ctx: RequestContext,
  services: McpServices,
  watching: ReadonlySet<string>,
  load: (taskIds: readonly string[]) => Promise<TaskView[]>,
): Promise<TaskView[]> {
  const { limits, statements } = services.listen;
  const flagged = await statements.flag(ctx.identity, [...watching], limits.flagTtlMs);
  const found = new Map(flagged.map((view) => [view.id, view]));
  const unread = [...watching].filter((id) => !found.has(id));
  if (unread.length > 0) for (const view of await load(unread)) found.set(view.id, view);
  return [...watching].flatMap((id) => found.get(id) ?? []);
}

/** The SSE stream, dropped with a last error message once the client falls too far behind. */
function openListenStream(
  ctx: RequestContext,
  services: McpServices,
  subscriptionId: RequestId,
): SseStream {
  const { limits } = services.listen;
  return createSseStream({
    keepAliveMs: services.settings.sseKeepAliveMs,
    overflow: {
      maxBufferedBytes: limits.maxBufferedBytes,
      lastMessage: () =>
        jsonRpcError(
          subscriptionId,
          new ProtocolError(
            ErrorCode.InternalError,
            `Listen stream dropped: the client fell more than ${limits.maxBufferedBytes} bytes behind (MCP_LISTEN_BUFFER_BYTES); listen again to get current snapshots`,
            { reason: 'slow_consumer', maxBufferedBytes: limits.maxBufferedBytes },
          ),
        ),
      onDropped: () => {
        services.metrics.streamsDropped.inc();
        ctx.log.warn({ subscriptionId }, 'listen stream dropped: slow consumer');
      },
    },
  });
}

/** Sends each task's snapshot when it differs from the last one sent; knows which are terminal. */
class SnapshotSender {
  readonly #lastSent = new Map<string, string>();
  readonly terminal = new Set<string>();

  constructor(
    private readonly stream: SseStream,
    private readonly subscriptionId: RequestId,
    private readonly serverInfo: Implementation,
  ) {}

  send(task: TaskView): void {
    const message = buildTaskStatusNotification(
      this.subscriptionId,
      buildTaskSnapshot(task),
      this.serverInfo,
    );
    const serialized = JSON.stringify(message);
    if (this.#lastSent.get(task.id) === serialized) return;
    this.#lastSent.set(task.id, serialized);
    if (isTerminalStatus(task.status)) this.terminal.add(task.id);
    this.stream.send(message);
  }

  /** After a listener reconnect every snapshot is sent again, changed or not. */
  forgetSent(): void {
    this.#lastSent.clear();
  }

  endGracefully(): void {
    this.stream.send(
      jsonRpcResult(
        this.subscriptionId,
        buildSubscriptionEnd(this.subscriptionId, this.serverInfo),
      ),
    );
    this.stream.close();
  }
}

/**
 * The stream's life around the pump: ends gracefully on shutdown, closes when the client goes,
 * renews the listen flags while open, and on close releases everything it held.
 */
function attachLifecycle(
  ctx: RequestContext,
  services: McpServices,
  parts: {
    stream: SseStream;
    snapshots: SnapshotSender;
    inbox: ChangeInbox;
    watching: ReadonlySet<string>;
    release: () => void;
  },
): { onShutdown: () => void } {
  const { stream, snapshots, inbox, watching } = parts;
  const { limits, statements } = services.listen;
  const onShutdown = (): void => {
    snapshots.endGracefully();
    inbox.wake();
  };
  const onClientGone = (): void => {
    stream.close();
    inbox.wake();
  };
  services.shutdownSignal.addEventListener('abort', onShutdown, { once: true });
  ctx.signal.addEventListener('abort', onClientGone, { once: true });
  // The flags lapse flagTtlMs after they were last written (migration 0008): renewed while the
  // stream is open, so they lapse only once no stream listens (a flag with more than half its
  // time left is not written again, so only every other renewal writes).
  const renewFlags = setInterval(
    () => {
      const active = [...watching].filter((id) => !snapshots.terminal.has(id));
      if (active.length === 0) return;
      statements
        .flag(ctx.identity, active, limits.flagTtlMs)
        .catch((error: unknown) => ctx.log.warn({ err: error }, 'could not renew listen flags'));
    },
    Math.max(1, Math.floor(limits.flagTtlMs / 3)),
  );
  renewFlags.unref();
  stream.onClose(() => {
    clearInterval(renewFlags);
    parts.release();
    services.shutdownSignal.removeEventListener('abort', onShutdown);
    ctx.signal.removeEventListener('abort', onClientGone);
    services.metrics.openStreams.dec();
    inbox.wake();
  });
  return { onShutdown };
}

/**
 * One loop per stream keeps its messages in commit order and its loads one at a time (each in a
 * statement the replica's streams share, which starts after the previous one ended): waits
 * for changes, loads the changed tasks, sends their snapshots; ends gracefully once every
 * watched task is terminal. A store outage does not end the stream: the snapshots are loaded
 * again once it is back (the keep-alives go on meanwhile). Anything else is a bug and rejects.
 */
async function pumpChanges(
  ctx: RequestContext,
  parts: {
    stream: SseStream;
    snapshots: SnapshotSender;
    inbox: ChangeInbox;
    watching: ReadonlySet<string>;
    load: (taskIds: readonly string[]) => Promise<TaskView[]>;
    subscriptionId: RequestId;
  },
): Promise<void> {
  const { stream, snapshots, inbox, watching } = parts;
  // A listen naming no task (or none of the caller's) has nothing it could ever be sent: it
  // ends right after the acknowledgement instead of holding a connection open forever.
  const allSettled = (): boolean => snapshots.terminal.size === watching.size;
  while (!stream.closed) {
    if (allSettled()) {
      snapshots.endGracefully();
      return;
    }
    if (inbox.empty) {
      await inbox.waitForWork();
      continue;
    }
    // After a listener reconnect every snapshot is sent again, changed or not: the client may
    // have missed changes during the gap and must not have to diff to find out.
    if (inbox.resyncAll) snapshots.forgetSent();
    const ids = inbox.resyncAll ? [...watching] : [...inbox.changed];
    inbox.resyncAll = false;
    inbox.changed.clear();
    // Only accepted tasks: a change of an id the initial read refused may have come in before.
    const pending = ids.filter((id) => watching.has(id) && !snapshots.terminal.has(id));
    if (pending.length === 0 || stream.closed) continue;
    let loaded: TaskView[];
    try {
      loaded = await parts.load(pending);
    } catch (error) {
      if (infrastructureFailure(error) === undefined) throw error;
      ctx.log.warn(
        { err: error, subscriptionId: parts.subscriptionId },
        'listen load failed; retrying',
      );
      for (const id of pending) inbox.changed.add(id);
      await inbox.waitToRetry(STORE_RETRY_AFTER_MS);
      continue;
    }
    for (const task of loaded) {
      if (stream.closed) break;
      snapshots.send(task);
    }
  }
}

/**
 * subscriptions/listen (R21): the POST's response is an SSE stream. Order on the stream:
 * the acknowledgement (only the caller's own tasks), then each task's current snapshot, then a
 * snapshot after every committed change any worker or replica makes (Postgres LISTEN; the tasks
 * are flagged `listened` first, since only flagged tasks are announced), and on
 * a listener reconnect every snapshot again, since changes during the gap were not delivered.
 * Only taskIds are honoured: this server has no list-changed or resource notifications to send.
 * The stream ends with the graceful end message once every accepted task is terminal (nothing
 * more can happen; at once when none was named or accepted), or when the replica shuts down; the
 * client closing it ends it silently. A client that stops reading is dropped with an error once
 * its stream holds more than the buffer bound. Limits: see listen-limits.ts.
 */
export const subscriptionsListen: MethodHandler = async (
  ctx,
  services,
): Promise<HandlerOutcome> => {
  const { limits, slots, statements } = services.listen;
  const { requested, namesTasks } = parseListenRequest(ctx, limits);
  const { tenant, principal } = ctx.identity;
  const subscriptionId = ctx.id;
  const watching = new Set(requested.filter(isWellFormedTaskId));
  // Before any query: a refused stream must cost nothing.
  const releaseSlot = slots.take(`${tenant}\u0000${principal}`);

  // Subscribe before the first read so a change committed in between is not missed.
  const inbox = new ChangeInbox(watching);
  const unsubscribe = services.changes.subscribe(inbox.onChange, inbox.onResync);
  const release = (): void => {
    unsubscribe();
    releaseSlot();
  };

  // Every stream's loads of the same moment share one statement (listen-statements.ts).
  const load = (taskIds: readonly string[]): Promise<TaskView[]> =>
    statements.load(ctx.identity, taskIds);
  let accepted: TaskView[];
  try {
    accepted = await loadAcceptedTasks(ctx, services, watching, load);
  } catch (error) {
    release();
    throw error;
  }
  // A client that left during the loads would never see the stream, and its abort has already
  // fired, so nothing would ever close it: stop before building it.
  if (ctx.signal.aborted) {
    release();
    throw new ProtocolError(ErrorCode.InternalError, 'Client went away');
  }
  const acceptedIds = new Set(accepted.map((task) => task.id));
  for (const id of watching) if (!acceptedIds.has(id)) watching.delete(id);

  const stream = openListenStream(ctx, services, subscriptionId);
  services.metrics.openStreams.inc();
  const snapshots = new SnapshotSender(stream, subscriptionId, services.serverInfo);
  const { onShutdown } = attachLifecycle(ctx, services, {
    stream,
    snapshots,
    inbox,
    watching,
    release,
  });

  // Echo only what was asked for and is honoured (SUB: never announce unrequested types).
  const honoured = namesTasks ? { taskIds: accepted.map((task) => task.id) } : {};
  stream.send(buildSubscriptionsAcknowledged(subscriptionId, honoured));
  for (const task of accepted) snapshots.send(task);

  if (services.shutdownSignal.aborted) onShutdown();
  pumpChanges(ctx, { stream, snapshots, inbox, watching, load, subscriptionId }).catch(
    (error: unknown) => {
      ctx.log.error({ err: error }, 'listen stream failed; closing it');
      stream.close();
    },
  );
  ctx.log.debug({ accepted: accepted.length, requested: requested.length }, 'listen stream opened');
  return { kind: 'stream', response: stream.response };
};
