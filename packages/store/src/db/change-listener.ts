import pg from 'pg';
import { DEFAULT_CONNECTION_TIMEOUT_MS } from './database.js';

/**
 * The channel every announced change goes on (a listened task's client-visible change, a cancel
 * request, an expiry under a lease; migrations 0007, 0008); the payload is the task id.
 */
export const TASK_CHANGES_CHANNEL = 'mcp_task_changes';
/**
 * Only the changes a worker holding the task acts on: a cancel request and an expiry under its
 * lease (migration 0025). Workers listen here, so a listen stream's traffic costs them nothing.
 */
export const TASK_LEASE_CHANGES_CHANNEL = 'mcp_task_lease_changes';

export type TaskChangesChannel = typeof TASK_CHANGES_CHANNEL | typeof TASK_LEASE_CHANGES_CHANNEL;

export const CHANGE_LISTENER_APPLICATION_NAME = 'mcp-tasks change listener';

export interface TaskChangeListener {
  /** Returns the unsubscribe function. */
  subscribe(handler: (taskId: string) => void): () => void;
  close(): Promise<void>;
}

export interface TaskChangeListenerOptions {
  connectionString: string;
  /** Default TASK_CHANGES_CHANNEL (every announced change). */
  channel?: TaskChangesChannel;
  onError?: (e: unknown) => void;
  /**
   * Called after a dropped connection is back and listening. Notifications sent while it was down
   * are lost (LISTEN replays nothing), so subscribers must refetch whatever they watch.
   */
  onReconnect?: () => void;
  /** Bound on opening the connection (first connect and each reconnect); default 5000 ms. */
  connectionTimeoutMs?: number;
  /** Backoff bounds for reconnecting; defaults 100 ms doubling to 5 s. */
  reconnectDelayMs?: { initial: number; max: number };
}

/**
 * A dedicated LISTEN connection (never pooled: a pooled connection would stop listening the moment
 * it went back to the pool). The first connect must succeed (the promise rejects otherwise); after
 * that, a drop is retried with backoff forever, until close().
 */
export async function createTaskChangeListener(
  options: TaskChangeListenerOptions,
): Promise<TaskChangeListener> {
  const listener = new ReconnectingListener(options);
  await listener.connect();
  return listener;
}

/** The listener's one connection at a time, and the backoff between reconnects. */
class ReconnectingListener implements TaskChangeListener {
  private readonly handlers = new Set<(taskId: string) => void>();
  private readonly channel: TaskChangesChannel;
  private readonly initial: number;
  private readonly max: number;
  private closed = false;
  private client: pg.Client | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private delay: number;
  private readonly report = (error: unknown): void => reportSafely(this.options, error);

  constructor(private readonly options: TaskChangeListenerOptions) {
    this.channel = options.channel ?? TASK_CHANGES_CHANNEL;
    const { initial, max } = options.reconnectDelayMs ?? { initial: 100, max: 5_000 };
    this.initial = initial;
    this.max = max;
    this.delay = initial;
  }

  /** Opens a connection and LISTENs on it; it becomes the listener's once that succeeded. */
  async connect(): Promise<void> {
    const next = newListenClient(this.options);
    // Until LISTEN succeeded, failures belong to the caller of connect(), not to the reconnect loop
    // (otherwise a failed first connect would leave a retry timer running behind a rejected promise).
    let live = false;
    let dropped = false;
    const onDrop = (error?: unknown): void => {
      if (!live || dropped) return;
      dropped = true;
      if (this.client === next) this.client = undefined;
      if (this.closed) return;
      if (error !== undefined) this.report(error);
      next.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    next.on('error', onDrop);
    next.on('end', () => onDrop());
    next.on('notification', (message) => {
      if (message.channel === this.channel) deliver(this.handlers, message, this.report);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${this.channel}`);
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await next.end().catch(() => undefined);
      return;
    }
    live = true;
    this.client = next;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().then(
        () => {
          this.delay = this.initial;
          if (!this.closed) this.options.onReconnect?.();
        },
        (error: unknown) => {
          this.report(error);
          this.delay = Math.min(this.delay * 2, this.max);
          this.scheduleReconnect();
        },
      );
    }, this.delay);
  }

  subscribe(handler: (taskId: string) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.handlers.clear();
    const current = this.client;
    this.client = undefined;
    await current?.end().catch(() => undefined);
  }
}

/** Tells options.onError about an error of the listener or a subscriber. */
function reportSafely(options: TaskChangeListenerOptions, error: unknown): void {
  try {
    options.onError?.(error);
  } catch {
    // An error reporter that throws must not take the listener down.
  }
}

/** The LISTEN connection, not yet connected. */
function newListenClient(options: TaskChangeListenerOptions): pg.Client {
  return new pg.Client({
    connectionString: options.connectionString,
    application_name: CHANGE_LISTENER_APPLICATION_NAME,
    // Without it a black-holed server keeps the first connect (startup) or a reconnect waiting
    // for ever, and every listen stream with it.
    connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    // This connection only receives: a half-open TCP link (NAT or load balancer idle cut)
    // would otherwise raise neither 'error' nor 'end', and every listen stream would go quiet.
    // TCP keep-alive probes turn such a link into an error, which triggers the reconnect.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
}

/** Hands a task change to every subscriber; one that throws is reported, the others still get it. */
function deliver(
  handlers: ReadonlySet<(taskId: string) => void>,
  message: pg.Notification,
  report: (error: unknown) => void,
): void {
  if (message.payload === undefined) return;
  for (const handler of handlers) {
    try {
      handler(message.payload);
    } catch (error) {
      report(error);
    }
  }
}
