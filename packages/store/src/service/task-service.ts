import { createConsoleService, type ConsoleService } from '../console/console-service.js';
import type { InputRequests, InputResponses, Task, TaskOwner, TaskView } from '@mcp-tasks/tasks';
import { context, trace, SpanStatusCode, type Span } from '@opentelemetry/api';
import { contextFromCarrier, linkTo } from '@mcp-tasks/tracing';
import type { Db } from '../db/database.js';
import { flagListenedTasksOfOwners, type ListenFlagRequest } from '../rows/listen-repository.js';
import { CreateOverloadedError, ReplicaLagError, StoreUnavailableError } from '../errors.js';
import { createNaturalBatcher, singleOrShared, type BatchOutcome } from '../db/natural-batcher.js';
import { createOutbox, type Outbox, type WakeUpQueue } from '../wake-up/outbox.js';
import { createReplicaWaiter, replicaNotCaughtUp, type ReplicaWaiter } from '../db/replica.js';
import {
  createTasks,
  mayHaveCommitted,
  requestCancel,
  type CreatedTask,
  type NewTask,
} from '../rows/task-repository.js';
import {
  getTaskViewForPrincipal,
  getTaskViewsForPrincipals,
  type TaskViewKey,
} from './task-view.js';
import { createWithdrawals, type Withdrawals } from './withdrawals.js';
import { createInputAnswers } from './input-answers.js';

export interface TaskService {
  /**
   * Returns once the row is committed and readable; the wake-up follows (settleWakeUps), and its
   * failure is reported, not thrown (the sweeper retries). Repeating a create (same id, owner and
   * operation) returns the existing task and wakes nothing, unless it was never woken
   * (see CreateOptions). Every failure leaves nothing that will run unless `kept` says so:
   * CreateOverloadedError (refused before it was sent), ReplicaLagError (the read replica lags
   * past the bound), StoreUnavailableError (the database or the replica failed), a domain error
   * of this input alone (TaskIdConflictError, UnstorableArgumentsError), or whatever `onTaken`
   * threw (the caller left before its create was sent).
   */
  createAndWake(input: NewTask, options?: CreateOptions): Promise<Task>;
  /**
   * Records the owner's answers to keys still outstanding when the write runs (see
   * recordInputResponses) and wakes the task if they resumed it; resolves after the write
   * committed, the wake-up then sent after the reply (Outbox.wakeAfterReply). Concurrent calls
   * share statements (natural batching).
   */
  submitInputResponses(
    owner: TaskOwner,
    taskId: string,
    responses: InputResponses,
  ): Promise<{ found: boolean }>;
  cancel(owner: TaskOwner, taskId: string): Promise<{ found: boolean }>;
  /**
   * What the owner may see of a task (tasks/get); reads the replica when one is configured, and
   * the primary when the replica has no such task (it may lag behind the create).
   */
  getTaskView(
    owner: TaskOwner,
    taskId: string,
    options?: ReadOptions,
  ): Promise<TaskView | undefined>;
  /**
   * The owner's outstanding input requests as the primary has them (tasks/update checks answers
   * against them); undefined when the owner has no such task. Concurrent reads share one
   * statement (natural batching), with polls too when no replica is configured.
   */
  getInputRequests(owner: TaskOwner, taskId: string): Promise<InputRequests | undefined>;
  /**
   * What each key's owner may see of its task, from the primary, in ONE statement whatever the
   * owners (listen loads, right after a change: a replica's streams share one); a foreign or
   * missing task answers undefined.
   */
  getTaskViewsFromPrimary(keys: readonly TaskViewKey[]): Promise<(TaskView | undefined)[]>;
  /**
   * Flags each request's tasks so their changes are announced for its `ttlMs` (see
   * flagListenedTasks), in ONE statement whatever the owners; a stream open longer asks again to
   * renew its flags. Answers, per request, the tasks it flagged as they are at the flag's commit
   * (see flagListenedTasksOfOwners): those need no read.
   */
  flagListened(requests: readonly ListenFlagRequest[]): Promise<TaskView[][]>;
  /**
   * Resolves when every created or resumed task's wake-up has been sent or reported lost. A
   * create or an answer returns before its wake-up is sent (see Outbox.wakeAfterReply); call this
   * before closing the queue.
   */
  settleWakeUps(): Promise<void>;
  /** The operator console's reads and actions (across owners, within an operator's scope). */
  readonly console: ConsoleService;
  /** Readiness checks: `postgres` (the primary), and `postgres_read` when a replica is configured. */
  readonly databaseChecks: readonly DatabaseCheck[];
}

export interface DatabaseCheck {
  name: 'postgres' | 'postgres_read';
  check: () => Promise<void>;
}

export interface CreateOptions {
  /**
   * The id is derived from the request (the final MRTR round), so a client's retry names this
   * task again. After a replica-lag timeout such a task is kept, not withdrawn: the retry must get
   * a task that will run, never a handle to one the server cancelled (also when another replica
   * hands it to the retry while this wait is timing out). A repeat wakes it if nobody has.
   */
  derivedId?: boolean;
  /**
   * Called when the create is taken from the queue into an INSERT, just before it is sent. If it
   * throws (the request timed out or its client left while it waited), the create is dropped,
   * nothing is sent, and createAndWake rejects with that error.
   */
  onTaken?: () => void;
}

export interface ReadOptions {
  /** As CreateOptions.onTaken: a poll whose caller is gone is dropped before its read is sent. */
  onTaken?: () => void;
}

export interface TaskServiceOptions {
  db: Db;
  /** A streaming replica the gateway reads from; creation waits until it has the row (R11). */
  readDb?: Db;
  visibilityTimeoutMs?: number;
  wakeUpQueue: WakeUpQueue;
  /** Told about a wake-up (or mark) that failed; the task is still durable and the sweeper will find it. */
  onWakeUpError?: (taskId: string, error: unknown) => void;
  /** Creates inserted (and enqueued) together at most; default 256. */
  createBatchSize?: number;
  /** Created tasks' wake-ups not yet sent beyond which a create waits for its own; default 1024. */
  maxPendingWakeUps?: number;
  /**
   * How long a create's or an answer's wake-up, finding no add in flight, waits for others to
   * share its job (after the reply, which never waits for it); default DEFAULT_WAKE_UP_LINGER_MS.
   */
  wakeUpLingerMs?: number;
  /**
   * Creates waiting for the next INSERT at most (the one in flight not counted); one more is
   * refused with CreateOverloadedError. Default 2048.
   */
  maxWaitingCreates?: number;
  /** How long a create may wait for its INSERT; then it is refused unsent. Default 5000 ms. */
  maxCreateWaitMs?: number;
  /** Told when a failed create could not be withdrawn within the visibility timeout (it may run). */
  onWithdrawGiveUp?: (taskIds: readonly string[], error: unknown) => void;
}

const DEFAULT_VISIBILITY_TIMEOUT_MS = 2_000;
const DEFAULT_CREATE_BATCH = 256;
export const DEFAULT_MAX_WAITING_CREATES = 2048;
export const DEFAULT_MAX_CREATE_WAIT_MS = 5_000;
/**
 * A wake-up waits this long for others to share its job: the job, not the wake-up, is what a
 * worker pays a Redis round trip for, and with the load split over several gateways each one's
 * natural batches shrink (issue 30; docs/adr/0016-wake-ups-linger.md).
 */
export const DEFAULT_WAKE_UP_LINGER_MS = 1;

const tracer = trace.getTracer('@mcp-tasks/store');

/**
 * The batch's one INSERT as one span (docs/tracing.md), only when some create in it is traced:
 * a child of the first traced create's request, linked from every traced create's request, so
 * each create's trace shows the statement it shared.
 */
function startInsertSpan(creates: readonly PendingCreate[]): Span | undefined {
  const carriers = creates.flatMap((create) =>
    create.input.traceContext === undefined ? [] : [create.input.traceContext],
  );
  if (carriers.length === 0) return undefined;
  return tracer.startSpan(
    'tasks.insert',
    {
      attributes: { 'mcp_tasks.batch.size': creates.length, 'db.system.name': 'postgresql' },
      links: carriers.flatMap((carrier) => linkTo(carrier.traceparent)),
    },
    contextFromCarrier(carriers[0]),
  );
}

/** A span from the deferred wake-up's scheduling until BullMQ took it (or it was reported lost). */
function endWakeUpSpan(taskId: string): (sent: boolean) => void {
  const span = tracer.startSpan('tasks.wake_up', {
    attributes: { 'mcp_tasks.task.id': taskId, 'messaging.system': 'bullmq' },
  });
  return (sent) => {
    if (!sent)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: 'wake-up lost; the sweeper will send it',
      });
    span.end();
  };
}

/** One create as the batcher carries it. */
interface PendingCreate {
  input: NewTask;
  derivedId: boolean;
}

/**
 * The one door into the store for the gateway, and the start of the outbox sequence "commit ->
 * wait until readable -> wake". Commit first, so the queue never names a task Postgres does not
 * have; wake after the row is readable everywhere, so a worker or a client on any replica finds
 * it. The wake-up step itself (and when it marks the row) is outbox.ts. At-least-once wake-ups;
 * claimLease dedupes. Reads go where they always went: tasks/get to the replica when configured,
 * everything else to the primary.
 *
 * Creates are batched naturally (natural-batcher.ts): those that arrive while an INSERT is in
 * flight go in the next one, one statement for all, and likewise their replica wait (one poll)
 * and their wake-ups (one addBulk). Each caller still gets only its own outcome, after its own
 * row committed and is readable. A create's wake-up is sent just after its reply, not before
 * (Outbox.wakeAfterReply): the row is the record and the sweeper recovers a lost wake-up, so the
 * reply need not wait for Redis.
 */
export function createTaskService(options: TaskServiceOptions): TaskService {
  const { db, readDb } = options;
  const visibilityTimeoutMs = options.visibilityTimeoutMs ?? DEFAULT_VISIBILITY_TIMEOUT_MS;
  const maxBatchSize = options.createBatchSize ?? DEFAULT_CREATE_BATCH;

  const withdrawals = createWithdrawals({
    db,
    retryForMs: visibilityTimeoutMs,
    onGiveUp: options.onWithdrawGiveUp,
  });
  const insert = createNaturalBatcher<PendingCreate, CreatedTask>({
    maxBatchSize,
    maxWaiting: options.maxWaitingCreates ?? DEFAULT_MAX_WAITING_CREATES,
    maxWaitMs: options.maxCreateWaitMs ?? DEFAULT_MAX_CREATE_WAIT_MS,
    overloaded: (bound, limit) =>
      new CreateOverloadedError(bound === 'length' ? 'queue_length' : 'queue_age', limit),
    run: (creates) => insertBatch(db, withdrawals, creates),
  });
  const replica =
    readDb === undefined
      ? undefined
      : createReplicaWaiter(readDb, { timeoutMs: visibilityTimeoutMs });
  const outbox = createOutbox({
    db,
    wakeUpQueue: options.wakeUpQueue,
    onWakeUpError: options.onWakeUpError,
    maxBatchSize,
    maxPendingWakeUps: options.maxPendingWakeUps,
    wakeUpLingerMs: options.wakeUpLingerMs ?? DEFAULT_WAKE_UP_LINGER_MS,
  });
  const { getTaskView, readOnPrimary } = createViewReader(db, readDb, maxBatchSize);
  const recordAnswers = createInputAnswers(db, maxBatchSize);
  const databaseChecks = databaseChecksOf(db, readDb);

  return {
    createAndWake: (input, createOptions) =>
      createAndWake({ insert, replica, withdrawals, outbox }, input, createOptions),
    async submitInputResponses(owner, taskId, responses) {
      const { found, resumed } = await recordAnswers(owner, taskId, responses);
      // Like a create's: after the reply (the row is the record; a lost wake-up is swept).
      if (resumed) await outbox.wakeAfterReply(taskId, 'resumed');
      return { found };
    },
    async cancel(owner, taskId) {
      // A held task learns of the request from its next renewLease; the change feed tells watchers.
      const { found } = await requestCancel(db, owner, taskId);
      return { found };
    },
    getTaskView,
    getInputRequests: async (owner, taskId) =>
      (await readOnPrimary({ tenant: owner.tenant, principal: owner.principal, taskId }))
        ?.inputRequests,
    getTaskViewsFromPrimary: (keys) => getTaskViewsForPrincipals(db, keys),
    flagListened: (requests) => flagListenedTasksOfOwners(db, requests),
    settleWakeUps: async () => {
      await Promise.all([outbox.settle(), withdrawals.settle()]);
    },
    databaseChecks,
    console: createConsoleService({
      db,
      readDb,
      // After the reply, as tasks/update's: the console never waits for Redis either.
      wakeResumed: (taskId) => outbox.wakeAfterReply(taskId, 'resumed'),
    }),
  };
}

/**
 * One INSERT for the batch. Each create gets its own outcome; if the statement failed for all
 * and may have committed, a withdraw of the fresh ids starts before anyone is answered and is
 * retried until it lands, within the visibility timeout, which the sweeper's grace exceeds: so
 * no caller is told "failed" about a task that will run (a derived id is kept: its retry names
 * it again).
 */
async function insertBatch(
  db: Db,
  withdrawals: Withdrawals,
  creates: readonly PendingCreate[],
): Promise<BatchOutcome<CreatedTask>[]> {
  const span = startInsertSpan(creates);
  try {
    const insertAll = () =>
      createTasks(
        db,
        creates.map((create) => create.input),
      );
    return await (span === undefined
      ? insertAll()
      : context.with(trace.setSpan(context.active(), span), insertAll));
  } catch (error) {
    span?.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    // Not awaited: the database that just failed may hold the withdraw as long as it held the
    // INSERT; it is retried until it lands, within the visibility timeout (see withdrawals.ts).
    if (mayHaveCommitted(error)) {
      void withdrawals.withdraw(
        creates.filter((create) => !create.derivedId).map((create) => create.input),
      );
    }
    return creates.map(({ input, derivedId }) => ({
      ok: false,
      error: new StoreUnavailableError(input.id, derivedId, { cause: error }),
    }));
  } finally {
    span?.end();
  }
}

/**
 * TaskService.createAndWake: the batched insert, the replica wait, then the wake-up after the
 * reply.
 */
async function createAndWake(
  parts: {
    insert: ReturnType<typeof createNaturalBatcher<PendingCreate, CreatedTask>>;
    replica: ReplicaWaiter | undefined;
    withdrawals: Withdrawals;
    outbox: Outbox;
  },
  input: NewTask,
  createOptions: CreateOptions = {},
): Promise<Task> {
  const { insert, replica, withdrawals, outbox } = parts;
  const derivedId = createOptions.derivedId === true;
  const { task, created, woken } = await insert(
    { input, derivedId },
    { onTaken: createOptions.onTaken },
  );
  const traced = input.traceContext !== undefined;
  if (replica !== undefined) {
    const span = traced
      ? tracer.startSpan('tasks.replica_wait', { attributes: { 'mcp_tasks.task.id': task.id } })
      : undefined;
    try {
      await replica.waitUntilReadable(task.id);
    } catch (error) {
      span?.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      // A fresh random id: the client gets an error, not a handle, and no retry can ever name
      // this task, so withdraw it (unheld and never enqueued, so cancelled at once) before the
      // sweeper runs work nobody can see. A derived id is kept: the retry names it again.
      // A repeat of an earlier create keeps its task: that one's handle was already given out.
      // A withdraw that fails is retried in the background; the answer stays the wait's.
      const kept = !created || derivedId;
      if (!kept) await withdrawals.withdraw([input]);
      if (error instanceof ReplicaLagError) throw error;
      throw new StoreUnavailableError(task.id, kept, { cause: error });
    } finally {
      span?.end();
    }
  }
  // A repeat wakes nothing twice: a derived-id repeat wakes only a task no wake-up is known
  // to have reached (its first create may have failed its replica wait before enqueueing),
  // and the created job's id is the task id, so if that first wake-up is still queued the
  // add is a no-op (BullMQ keeps one job per id while it exists).
  const neverWoken = derivedId && !created && !woken && task.status === 'working';
  if (created || neverWoken) {
    await outbox.wakeAfterReply(task.id, 'created', traced ? endWakeUpSpan(task.id) : undefined);
  }
  return task;
}

/**
 * The task service's poll: reads batched naturally like creates, on the replica when there is one,
 * a replica's miss asked again of the primary. `readOnPrimary` is the primary's reader (the
 * replica's misses and tasks/update's reads share it).
 */
function createViewReader(
  db: Db,
  readDb: Db | undefined,
  maxBatchSize: number,
): {
  getTaskView: TaskService['getTaskView'];
  readOnPrimary: (key: TaskViewKey, readOptions?: ReadOptions) => Promise<TaskView | undefined>;
} {
  // Polls batched naturally like creates: a lone poll is read at once with its own statement,
  // polls that arrive while a read is in flight share the next one.
  const viewReader = (source: Db) =>
    createNaturalBatcher<TaskViewKey, TaskView | undefined>({
      maxBatchSize,
      run: singleOrShared({
        single: ({ tenant, principal, taskId }) =>
          getTaskViewForPrincipal(source, tenant, principal, taskId),
        shared: async (keys) =>
          (await getTaskViewsForPrincipals(source, keys)).map((value) => ({ ok: true, value })),
      }),
    });
  const readOnPrimary = viewReader(db);
  /**
   * A miss on a replica is asked again of the primary (ADR 0007): behind a reader endpoint the
   * next read may reach a replica that lags more than the one the create waited for, and a
   * handle the client was given must never be "not found". The misses share one statement at a
   * time (natural batching), so ids that exist nowhere cost the primary at most one query in
   * flight per gateway, however many arrive. A replica that has not replayed the schema the read
   * needs (a migration just ran) counts as a miss too.
   */
  const readOnReplica = readDb === undefined ? undefined : viewReader(readDb);
  const getTaskView: TaskService['getTaskView'] = async (owner, taskId, readOptions) => {
    const key = { tenant: owner.tenant, principal: owner.principal, taskId };
    if (readOnReplica === undefined) return readOnPrimary(key, readOptions);
    let view: TaskView | undefined;
    try {
      view = await readOnReplica(key, readOptions);
    } catch (error) {
      if (!replicaNotCaughtUp(error)) throw error;
    }
    return view ?? readOnPrimary(key, readOptions);
  };
  return { getTaskView, readOnPrimary };
}

/** Readiness checks: the primary, and the read replica when there is one. */
function databaseChecksOf(db: Db, readDb: Db | undefined): DatabaseCheck[] {
  const ping = (target: Db) => async (): Promise<void> => {
    await target.selectNoFrom((eb) => eb.val(1).as('one')).execute();
  };
  const databaseChecks: DatabaseCheck[] = [{ name: 'postgres', check: ping(db) }];
  if (readDb !== undefined) databaseChecks.push({ name: 'postgres_read', check: ping(readDb) });
  return databaseChecks;
}
