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
  assertTasksExtension,
} from '@mcp-tasks/protocol';
import {
  buildTaskSnapshot,
  isTerminalStatus,
  isWellFormedTaskId,
  type Task,
} from '@mcp-tasks/tasks';
import { infrastructureFailure } from '@mcp-tasks/store';
import { STORE_RETRY_AFTER_MS } from '../errors.js';
import { createSseStream } from '../sse.js';
import type { HandlerOutcome, MethodHandler } from './context.js';

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
  const params = parseParams(ListenParamsSchema, ctx.params);
  if (listenRequiresTasksExtension(params))
    assertTasksExtension(ctx.meta, 'subscriptions/listen with taskIds');
  const { limits, slots, loadQueue } = services.listen;
  const flagFor = { ttlMs: limits.flagTtlMs };
  const requested = [...new Set(params.notifications.taskIds ?? [])];
  if (requested.length > limits.maxTaskIds) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `Too many taskIds: at most ${limits.maxTaskIds} per subscriptions/listen (MCP_LISTEN_MAX_TASK_IDS)`,
      { limit: limits.maxTaskIds },
    );
  }
  const { tenant, principal } = ctx.identity;
  const subscriptionId = ctx.id;
  const watching = new Set(requested.filter(isWellFormedTaskId));
  // Before any query: a refused stream must cost nothing.
  const releaseSlot = slots.take(`${tenant}\u0000${principal}`);

  // Subscribe before the first read so a change committed in between is not missed.
  const changed = new Set<string>();
  let resyncAll = false;
  let wake: (() => void) | undefined;
  const unsubscribe = services.changes.subscribe(
    (taskId) => {
      if (!watching.has(taskId)) return;
      changed.add(taskId);
      wake?.();
    },
    () => {
      resyncAll = true;
      wake?.();
    },
  );

  // One query per load, through the replica's bounded listen queue.
  const load = (taskIds: readonly string[]): Promise<Task[]> =>
    loadQueue(() => services.taskService.getTasks(ctx.identity, taskIds));
  let accepted: Task[];
  try {
    // Only flagged tasks announce their changes (ADR 0002); the flag commits before the first
    // read, so a change is either in that read or announced after it.
    await loadQueue(() => services.taskService.flagListened(ctx.identity, [...watching], flagFor));
    const found = new Map((await load([...watching])).map((task) => [task.id, task]));
    // In the order the client named them (one query returns rows in any order).
    accepted = [...watching].flatMap((id) => found.get(id) ?? []);
  } catch (error) {
    unsubscribe();
    releaseSlot();
    throw error;
  }
  // A client that left during the loads would never see the stream, and its abort has already
  // fired, so nothing would ever close it: stop before building it.
  if (ctx.signal.aborted) {
    unsubscribe();
    releaseSlot();
    throw new ProtocolError(ErrorCode.InternalError, 'Client went away');
  }
  const acceptedIds = new Set(accepted.map((task) => task.id));
  for (const id of watching) if (!acceptedIds.has(id)) watching.delete(id);

  const stream = createSseStream({
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
  services.metrics.openStreams.inc();
  const lastSent = new Map<string, string>();
  const terminal = new Set<string>();

  const sendSnapshot = (task: Task): void => {
    const message = buildTaskStatusNotification(
      subscriptionId,
      buildTaskSnapshot(task),
      services.serverInfo,
    );
    const serialized = JSON.stringify(message);
    if (lastSent.get(task.id) === serialized) return;
    lastSent.set(task.id, serialized);
    if (isTerminalStatus(task.status)) terminal.add(task.id);
    stream.send(message);
  };
  const endGracefully = (): void => {
    stream.send(
      jsonRpcResult(subscriptionId, buildSubscriptionEnd(subscriptionId, services.serverInfo)),
    );
    stream.close();
  };
  // A listen naming no task (or none of the caller's) has nothing it could ever be sent: it
  // ends right after the acknowledgement instead of holding a connection open forever.
  const allSettled = (): boolean => terminal.size === watching.size;

  const onShutdown = (): void => {
    endGracefully();
    wake?.();
  };
  const onClientGone = (): void => {
    stream.close();
    wake?.();
  };
  services.shutdownSignal.addEventListener('abort', onShutdown, { once: true });
  ctx.signal.addEventListener('abort', onClientGone, { once: true });
  // The flags lapse flagTtlMs after they were last written (migration 0008): renewed while the
  // stream is open, so they lapse only once no stream listens (a flag with more than half its
  // time left is not written again, so only every other renewal writes).
  const renewFlags = setInterval(
    () => {
      const active = [...watching].filter((id) => !terminal.has(id));
      if (active.length === 0) return;
      loadQueue(() => services.taskService.flagListened(ctx.identity, active, flagFor)).catch(
        (error: unknown) => ctx.log.warn({ err: error }, 'could not renew listen flags'),
      );
    },
    Math.max(1, Math.floor(limits.flagTtlMs / 3)),
  );
  renewFlags.unref();
  stream.onClose(() => {
    clearInterval(renewFlags);
    unsubscribe();
    releaseSlot();
    services.shutdownSignal.removeEventListener('abort', onShutdown);
    ctx.signal.removeEventListener('abort', onClientGone);
    services.metrics.openStreams.dec();
    wake?.();
  });

  // Echo only what was asked for and is honoured (SUB: never announce unrequested types).
  const honoured =
    params.notifications.taskIds === undefined ? {} : { taskIds: accepted.map((task) => task.id) };
  stream.send(buildSubscriptionsAcknowledged(subscriptionId, honoured));
  for (const task of accepted) sendSnapshot(task);

  // One loop per stream keeps its messages in commit order and its queries one at a time.
  const pump = async (): Promise<void> => {
    while (!stream.closed) {
      if (allSettled()) {
        endGracefully();
        return;
      }
      if (changed.size === 0 && !resyncAll) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      // After a listener reconnect every snapshot is sent again, changed or not: the client may
      // have missed changes during the gap and must not have to diff to find out.
      if (resyncAll) lastSent.clear();
      const ids = resyncAll ? [...watching] : [...changed];
      resyncAll = false;
      changed.clear();
      const pending = ids.filter((id) => !terminal.has(id));
      if (pending.length === 0 || stream.closed) continue;
      let loaded: Task[];
      try {
        loaded = await load(pending);
      } catch (error) {
        // A store outage does not end the stream: the snapshots are loaded again once it is
        // back (the keep-alives go on meanwhile). Anything else is a bug and ends it below.
        if (infrastructureFailure(error) === undefined) throw error;
        ctx.log.warn({ err: error, subscriptionId }, 'listen load failed; retrying');
        for (const id of pending) changed.add(id);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, STORE_RETRY_AFTER_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        continue;
      }
      for (const task of loaded) {
        if (stream.closed) break;
        sendSnapshot(task);
      }
    }
  };
  if (services.shutdownSignal.aborted) onShutdown();
  pump().catch((error: unknown) => {
    ctx.log.error({ err: error }, 'listen stream failed; closing it');
    stream.close();
  });
  ctx.log.debug({ accepted: accepted.length, requested: requested.length }, 'listen stream opened');
  return { kind: 'stream', response: stream.response };
};
