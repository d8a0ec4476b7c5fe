import { pollDelay, retryDelay, sleep, withRetry, type BackoffPolicy } from './backoff.js';
import { ConnectionError, HttpError, isRetryable, McpError, retryAfterOf } from './errors.js';
import type { HandleStore, StoredTask } from './handle-store.js';
import type { StreamMessage } from './wire.js';
import { isTerminal, type InputHandler, type InputResponses, type TaskSnapshot } from './types.js';

export interface WaitOptions {
  /** Asked once per input key; without it, `wait` keeps waiting for someone else to answer. */
  onInput?: InputHandler;
  /** Every snapshot that differs from the one before. */
  onUpdate?: (snapshot: TaskSnapshot) => void;
  /** Told about each retry after a network error, 429 or 503, with the delay chosen. */
  onRetry?: (error: unknown, delayMs: number) => void;
  signal?: AbortSignal;
  /** `subscribe` follows the task over `subscriptions/listen`, falling back to polling. */
  via?: 'poll' | 'subscribe';
}

export interface SubscribeOptions {
  signal?: AbortSignal;
  onRetry?: (error: unknown, delayMs: number) => void;
  /** Consecutive failures to open a stream before following by polling instead. Default 3. */
  maxStreamFailures?: number;
}

/** Codes that say "this server has no subscriptions/listen": follow by polling instead. */
const LISTEN_UNSUPPORTED = new Set([-32601]);

/** What a handle needs of its client (McpTasksClient is one): requests, a stream, backoff, a store. */
export interface HandleConnection {
  readonly backoff: BackoffPolicy;
  readonly store: HandleStore;
  /** Sends one request and returns its result; throws `McpError`, `HttpError` or `ConnectionError`. */
  request(
    method: string,
    params?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** Opens a `subscriptions/listen` stream; the caller owns and must end the iteration. */
  listen(taskIds: string[], signal?: AbortSignal): Promise<AsyncGenerator<StreamMessage>>;
}

/** A task on the server, followed from this process. Cheap: holds no connection. */
export class TaskHandle {
  /** The last snapshot seen, by any method. */
  last: TaskSnapshot | undefined;
  private readonly answered: Set<string>;
  private readonly shown = new Set<string>();

  constructor(
    private readonly client: HandleConnection,
    readonly taskId: string,
    private stored?: StoredTask,
  ) {
    this.answered = new Set(stored?.answeredKeys ?? []);
  }

  /** `tasks/get`, once (no retry). */
  async get(signal?: AbortSignal): Promise<TaskSnapshot> {
    const snapshot = (await this.client.request(
      'tasks/get',
      { taskId: this.taskId },
      signal,
    )) as unknown as TaskSnapshot;
    this.last = snapshot;
    return snapshot;
  }

  /** `tasks/update` with `inputResponses` (R17): acknowledged once committed. */
  async update(inputResponses: InputResponses, signal?: AbortSignal): Promise<void> {
    await this.client.request('tasks/update', { taskId: this.taskId, inputResponses }, signal);
    for (const key of Object.keys(inputResponses)) this.answered.add(key);
    await this.remember();
  }

  /** `tasks/cancel`: a request; the task ends `cancelled` when the worker honours it. */
  async cancel(signal?: AbortSignal): Promise<void> {
    await this.client.request('tasks/cancel', { taskId: this.taskId }, signal);
  }

  /**
   * Follows the task to a terminal status and returns that snapshot. Asks `onInput` once per
   * input key; retries network errors, 429 and 503 with capped backoff (honouring Retry-After);
   * an error the server means (unknown task, bad params) is thrown at once.
   */
  async wait(options: WaitOptions = {}): Promise<TaskSnapshot> {
    const source =
      options.via === 'subscribe'
        ? this.subscribe({
            ...(options.signal === undefined ? {} : { signal: options.signal }),
            ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
          })
        : this.poll(options);
    try {
      for await (const snapshot of source) {
        options.onUpdate?.(snapshot);
        if (isTerminal(snapshot)) {
          await this.client.store.remove(this.taskId);
          return snapshot;
        }
        if (snapshot.status === 'input_required') await this.answer(snapshot, options);
      }
    } catch (error) {
      if (error instanceof McpError && !isRetryable(error)) await this.forgetIfGone(error);
      throw error;
    }
    throw new ConnectionError(`stopped following task ${this.taskId}`);
  }

  /** Snapshots by `tasks/get` at the server's `pollIntervalMs`; only changes are yielded. */
  async *poll(options: Pick<WaitOptions, 'signal' | 'onRetry'> = {}): AsyncGenerator<TaskSnapshot> {
    let previous: string | undefined;
    for (;;) {
      const snapshot = await withRetry(
        this.client.backoff,
        () => this.get(options.signal),
        options.signal,
        options.onRetry,
      );
      const key = fingerprint(snapshot);
      if (key !== previous) {
        previous = key;
        yield snapshot;
        if (isTerminal(snapshot)) return;
        // Straight after an answer the task has moved on: look again without waiting.
        if (this.answeredAll(snapshot)) continue;
      }
      await sleep(pollDelay(this.client.backoff, snapshot.pollIntervalMs), options.signal);
    }
  }

  /**
   * Snapshots pushed over `subscriptions/listen`. A dropped stream (or a graceful end before the
   * task is terminal: the replica is shutting down) is followed by a `tasks/get` to catch what
   * was missed, then a new stream — through the same URL, so a load balancer picks a live
   * replica. A server without listen, or one whose streams keep failing, is polled instead.
   */
  async *subscribe(options: SubscribeOptions = {}): AsyncGenerator<TaskSnapshot> {
    const maxFailures = options.maxStreamFailures ?? 3;
    let previous: string | undefined;
    let failures = 0;
    const fresh = (snapshot: TaskSnapshot): boolean => {
      const key = fingerprint(snapshot);
      if (key === previous) return false;
      previous = key;
      return true;
    };
    for (;;) {
      let stream: AsyncGenerator<StreamMessage> | undefined;
      try {
        stream = await this.client.listen([this.taskId], options.signal);
        for await (const message of stream) {
          if (message.method === 'notifications/tasks' && message.params?.taskId === this.taskId) {
            failures = 0;
            const snapshot = message.params as unknown as TaskSnapshot;
            this.last = snapshot;
            if (fresh(snapshot)) yield snapshot;
            if (isTerminal(snapshot)) return;
          } else if (message.method === 'notifications/subscriptions/acknowledged') {
            failures = 0;
          }
        }
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (error instanceof McpError && LISTEN_UNSUPPORTED.has(error.code)) {
          yield* this.pollAfter(previous, options);
          return;
        }
        if (!isRetryable(error) && !(error instanceof HttpError)) throw error;
        failures += 1;
        if (failures >= maxFailures) {
          yield* this.pollAfter(previous, options);
          return;
        }
        const delay = retryDelay(this.client.backoff, failures - 1, retryAfterOf(error));
        options.onRetry?.(error, delay);
        await sleep(delay, options.signal);
      } finally {
        await stream?.return(undefined);
      }
      // Whatever ended the stream, the task may have moved while nobody listened.
      const snapshot = await withRetry(
        this.client.backoff,
        () => this.get(options.signal),
        options.signal,
        options.onRetry,
      );
      if (fresh(snapshot)) yield snapshot;
      if (isTerminal(snapshot)) return;
    }
  }

  private async *pollAfter(
    previous: string | undefined,
    options: SubscribeOptions,
  ): AsyncGenerator<TaskSnapshot> {
    for await (const snapshot of this.poll(options)) {
      if (fingerprint(snapshot) !== previous) yield snapshot;
    }
  }

  private async answer(snapshot: TaskSnapshot, options: WaitOptions): Promise<void> {
    if (options.onInput === undefined) return;
    const requests = snapshot.inputRequests ?? {};
    const fresh = Object.fromEntries(
      Object.entries(requests).filter(([key]) => !this.answered.has(key) && !this.shown.has(key)),
    );
    if (Object.keys(fresh).length === 0) return;
    for (const key of Object.keys(fresh)) this.shown.add(key);
    const answers = await options.onInput(fresh, {
      taskId: this.taskId,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (Object.keys(answers).length === 0) return;
    await withRetry(
      this.client.backoff,
      () => this.update(answers, options.signal),
      options.signal,
    );
  }

  private answeredAll(snapshot: TaskSnapshot): boolean {
    if (snapshot.status !== 'input_required') return false;
    const keys = Object.keys(snapshot.inputRequests ?? {});
    return keys.length > 0 && keys.every((k) => this.answered.has(k));
  }

  private async remember(): Promise<void> {
    const stored =
      this.stored ?? (await this.client.store.list()).find((t) => t.taskId === this.taskId);
    if (stored === undefined) return;
    this.stored = { ...stored, answeredKeys: [...this.answered] };
    if (this.last !== undefined) this.stored.lastStatus = this.last.status;
    await this.client.store.save(this.stored);
  }

  /** "Task not found or expired" (-32602 on tasks/get): nothing left to resume. */
  private async forgetIfGone(error: McpError): Promise<void> {
    if (error.code === -32602 && /not found|expired/i.test(error.message)) {
      await this.client.store.remove(this.taskId);
    }
  }
}

/** What makes two snapshots different for a reader: status, message, keys asked. */
function fingerprint(snapshot: TaskSnapshot): string {
  return JSON.stringify([
    snapshot.status,
    snapshot.statusMessage ?? null,
    Object.keys(snapshot.inputRequests ?? {}).sort(),
  ]);
}
