import { CompiledQuery } from 'kysely';
import {
  isWellFormedTaskId,
  type InputResponses,
  type Task,
  type TaskOperation,
  type TaskOwner,
} from '@mcp-tasks/tasks';
import type { Db, TaskRow } from '../db/database.js';
import { StoreUnavailableError, TaskIdConflictError } from '../errors.js';
import type { BatchOutcome } from '../db/natural-batcher.js';
import { executePrepared } from '../db/prepared-statements.js';
import { TASK_ROW_COLUMNS, taskRowToTask } from './task-row.js';
import type { TraceContext } from './trace-context.js';
import {
  RECORD_MANY_INPUT_RESPONSES,
  insertTasksText,
  RECORD_INPUT_RESPONSES,
  requestCancelStatement,
  withdrawTasksStatement,
} from '../sql/tasks.js';

const ROW_COLUMN_LIST = TASK_ROW_COLUMNS.join(', ');

/** The status message a task gets when a cancel request ends it without a worker. */
export const CANCELLED_BY_REQUEST = 'cancelled by request';
/** The status message of a task withdrawn because its create failed before its handle went out. */
export const WITHDRAWN_MESSAGE = 'withdrawn: its create failed before the handle was returned';
/** The status message of a task whose last answer just arrived, until its worker reports. */
export const RESUMED_MESSAGE = 'All input received; resuming';

export interface NewTask {
  id: string;
  owner: TaskOwner;
  operation: TaskOperation;
  ttlMs: number | null;
  pollIntervalMs: number | null;
  statusMessage: string | null;
  /** Where the task's trace continues (trace-context.ts); absent while tracing is off. */
  traceContext?: TraceContext;
}

/** One create's outcome: the task, and whether this call inserted it or found its twin. */
export interface CreatedTask {
  task: Task;
  /** false: the same owner already created the same operation under this id (a retry). */
  created: boolean;
  /**
   * A wake-up is known to have reached the task: a worker claimed it (lease epoch > 0) or the
   * sweeper or a worker's wake-again marked it enqueued. A create never marks (see createTaskService).
   */
  woken: boolean;
}

/**
 * Inserts the task (autocommit, one statement); see createTasks. Throws TaskIdConflictError when
 * the id names another owner's or another operation's task.
 */
export async function createTask(db: Db, input: NewTask): Promise<CreatedTask> {
  const [outcome] = await createTasks(db, [input]);
  if (outcome === undefined) throw new Error('createTasks returned no outcome');
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * Errors that belong to one row's values, not to the statement: SQLSTATE classes 22 (data
 * exception), 23 (integrity) and 54 (program limit: JSON nested past the server's stack).
 */
const isRowDataError = (error: unknown): boolean => {
  const code = sqlState(error);
  return code !== undefined && ['22', '23', '54'].includes(code.slice(0, 2));
};

/** The SQLSTATE of an error the server reported; undefined for a client-side or network error. */
function sqlState(error: unknown): string | undefined {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && code.length === 5 && typeof severity === 'string'
    ? code
    : undefined;
}

/** The statement failed because a row it would lock was held (NOWAIT); it wrote nothing. */
export const isLockNotAvailable = (error: unknown): boolean => sqlState(error) === '55P03';

/**
 * Whether a failed autocommit statement may still have committed: no answer from the server (the
 * connection dropped, the client-side read timeout fired) or the server going away mid-statement
 * (connection exceptions, 08; shutdown, 57P01-57P03). A statement the server answered with any
 * other error rolled back. A statement still waiting on a lock when its client vanished commits
 * when the lock frees, so "may have committed" also covers "may commit later".
 */
export function mayHaveCommitted(error: unknown): boolean {
  const code = sqlState(error);
  return code === undefined || code.startsWith('08') || code.startsWith('57P');
}

/** Arguments that cannot be stored (jsonb refuses them), named for the caller; nothing was sent. */
export class UnstorableArgumentsError extends RangeError {
  constructor(
    readonly taskId: string,
    problem: string,
  ) {
    super(`task ${taskId} arguments cannot be stored: ${problem}`);
    this.name = 'UnstorableArgumentsError';
  }
}

/**
 * In JSON.stringify's output a `\u` escape is only ever a control character or a lone surrogate
 * (pairs and other characters are written as they are), and jsonb refuses U+0000 and lone
 * surrogates. The backslashes before it must be odd in number, or the `u` is text.
 */
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(0000|d[89a-f][0-9a-f]{2})/i;

/**
 * One create's arguments as the statement's jsonb text. Everything that can throw for one input
 * (a value nested past JSON.stringify's stack, a character jsonb refuses) throws here, for that
 * input alone, before the shared statement is formed.
 */
function serializeArguments(input: NewTask): string {
  let text: string;
  try {
    text = JSON.stringify(input.operation.arguments);
  } catch (error) {
    throw new UnstorableArgumentsError(
      input.id,
      error instanceof RangeError ? 'nested too deep to serialise' : 'not serialisable as JSON',
    );
  }
  if (text.includes('\\u')) {
    const escape = UNSTORABLE_ESCAPE.exec(text)?.[1];
    if (escape !== undefined) {
      throw new UnstorableArgumentsError(
        input.id,
        escape === '0000'
          ? 'a NUL character (U+0000)'
          : `a lone UTF-16 surrogate (U+${escape.toUpperCase()})`,
      );
    }
  }
  return text;
}

/** A create ready for the shared statement: its arguments already serialised and checked. */
interface PreparedCreate {
  input: NewTask;
  argumentsJson: string;
}

/**
 * Inserts many tasks with ONE statement (autocommit) and answers each input on its own: created,
 * an idempotent repeat (same id, owner and operation: the existing task, `created: false`), or a
 * TaskIdConflictError for that input only; a malformed id is a RangeError and unstorable arguments
 * an UnstorableArgumentsError for that input, and neither reaches the database. The statement
 * inserts what is new and, from the same snapshot, reads the rows that already existed, so a
 * repeat costs no second round trip. Two rare cases take one more: a row a concurrent create
 * committed after this statement's snapshot (read again), and a row whose values the database
 * refuses (a check constraint): then each row is inserted on its own, so that error reaches only
 * its own caller.
 *
 * Isolation: whatever can fail for one input (serialising, comparing, mapping) is done for that
 * input alone, before the statement or after it, and fails only that input. The call throws only
 * when the statement itself failed for everyone (see mayHaveCommitted for what the caller owes then).
 */
export async function createTasks(
  db: Db,
  inputs: readonly NewTask[],
): Promise<BatchOutcome<CreatedTask>[]> {
  const outcomes: (BatchOutcome<CreatedTask> | undefined)[] = inputs.map(() => undefined);
  // One row per id: a repeat within the batch (a retry racing its original) is answered from
  // the row its first occurrence gets.
  const unique = new Map<string, PreparedCreate>();
  inputs.forEach((input, index) => {
    if (!isWellFormedTaskId(input.id)) {
      outcomes[index] = { ok: false, error: new RangeError(`malformed task id ${input.id}`) };
    } else if (!unique.has(input.id)) {
      try {
        unique.set(input.id, { input, argumentsJson: serializeArguments(input) });
      } catch (error) {
        outcomes[index] = { ok: false, error };
      }
    }
  });
  if (unique.size === 0) return outcomes.map((outcome) => outcome!);

  const failInputsOf = (id: string, error: unknown): void => {
    inputs.forEach((input, index) => {
      if (input.id === id && outcomes[index] === undefined) outcomes[index] = { ok: false, error };
    });
  };
  let rows = new Map<string, { row: TaskRow; created: boolean }>();
  try {
    rows = await insertOrFind(db, [...unique.values()]);
  } catch (error) {
    if (!isRowDataError(error)) throw error;
    if (unique.size === 1) failInputsOf([...unique.keys()][0]!, error);
    else {
      // One row's values failed the whole statement (nothing committed): insert each on its own
      // to find whose.
      const single = await Promise.all(
        [...unique.values()].map((create) =>
          insertOrFind(db, [create]).then(
            (found) => ({ id: create.input.id, found, error: undefined }),
            (rowError: unknown) => ({ id: create.input.id, found: undefined, error: rowError }),
          ),
        ),
      );
      for (const result of single) {
        if (result.found === undefined) failInputsOf(result.id, result.error);
        else for (const [id, value] of result.found) rows.set(id, value);
      }
    }
  }
  const failed = new Set(
    inputs.filter((_, index) => outcomes[index] !== undefined).map((i) => i.id),
  );
  const missing = [...unique.keys()].filter((id) => !rows.has(id) && !failed.has(id));
  if (missing.length > 0) {
    // Inserted by a concurrent create after this statement's snapshot: ON CONFLICT skipped them,
    // and the snapshot could not see them. They are committed now; read them. If that read
    // fails, only their inputs fail (they inserted nothing: their twin's caller has the task);
    // the rows this statement inserted are answered as usual.
    try {
      const late = await db.selectFrom('tasks').selectAll().where('id', 'in', missing).execute();
      for (const row of late) rows.set(row.id, { row, created: false });
    } catch (error) {
      for (const id of missing) {
        failInputsOf(id, new StoreUnavailableError(id, true, { cause: error }));
      }
    }
  }

  const claimed = new Set<string>();
  return inputs.map((input, index) => {
    const decided = outcomes[index];
    if (decided !== undefined) return decided;
    try {
      return { ok: true, value: answerCreate(input, rows.get(input.id), claimed) };
    } catch (error) {
      return { ok: false, error };
    }
  });
}

/**
 * One input's answer from its row. The input that inserted the row is not compared with it (the
 * row is that input); a repeat is compared, and a comparison that throws fails that input only.
 */
function answerCreate(
  input: NewTask,
  found: { row: TaskRow; created: boolean } | undefined,
  claimed: Set<string>,
): CreatedTask {
  // Deleted between the insert and the read (retention); the caller may retry.
  if (found === undefined) throw new Error(`task ${input.id} vanished while it was being created`);
  // Only the first input of an id inserted it; a twin in the same batch is a repeat.
  const created = found.created && !claimed.has(input.id);
  claimed.add(input.id);
  if (!created && !sameOperation(found.row, input)) throw new TaskIdConflictError(input.id);
  return {
    task: taskRowToTask(found.row),
    created,
    woken: found.row.lease_epoch > 0 || found.row.enqueued_at !== null,
  };
}

const INSERT_TASKS = insertTasksText(ROW_COLUMN_LIST);

/**
 * The one statement: the rows go in as arrays (the SQL text is the same for any batch size),
 * ON CONFLICT skips ids that exist, and the outer SELECT reads those from the statement's
 * snapshot, which cannot see the rows this statement inserts (they come from RETURNING).
 *
 * That read runs only when some input was not inserted (a one-time filter on the counts): the
 * plan is cached per connection, and one made while the table was nearly empty scans the whole
 * table for it (until autovacuum's ANALYZE replans), which cost every create a full scan.
 */
async function insertOrFind(
  db: Db,
  creates: readonly PreparedCreate[],
): Promise<Map<string, { row: TaskRow; created: boolean }>> {
  const inputs = creates.map((create) => create.input);
  const column = <T>(pick: (input: NewTask) => T): T[] => inputs.map(pick);
  const query = CompiledQuery.raw(INSERT_TASKS, [
    column((i) => i.id),
    column((i) => i.owner.tenant),
    column((i) => i.owner.principal),
    column((i) => i.operation.method),
    column((i) => i.operation.toolName),
    creates.map((create) => create.argumentsJson),
    column((i) => i.ttlMs),
    column((i) => i.pollIntervalMs),
    column((i) => i.statusMessage),
    column((i) => (i.traceContext === undefined ? null : JSON.stringify(i.traceContext))),
  ]);
  const result = await executePrepared<TaskRow & { created: boolean }>(db, 'insert_tasks', query);
  const rows = new Map<string, { row: TaskRow; created: boolean }>();
  for (const { created, ...row } of result.rows) rows.set(row.id, { row, created });
  return rows;
}

/** The stored row is the same operation by the same owner (an idempotent repeat). */
function sameOperation(row: TaskRow, input: NewTask): boolean {
  return (
    row.tenant === input.owner.tenant &&
    row.principal === input.owner.principal &&
    row.method === input.operation.method &&
    row.tool_name === input.operation.toolName &&
    JSON.stringify(canonical(row.arguments)) ===
      JSON.stringify(canonical(input.operation.arguments))
  );
}

/** jsonb does not keep key order; compare arguments with sorted keys. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** For the worker and the sweeper: no owner check. */
export async function getTask(db: Db, taskId: string): Promise<Task | undefined> {
  if (!isWellFormedTaskId(taskId)) return undefined;
  const row = await db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
  return row === undefined ? undefined : taskRowToTask(row);
}

/**
 * A task as its owner sees it. Missing, foreign and malformed ids all answer `undefined` (R15), and
 * a malformed id never reaches the database.
 */
export async function getTaskForPrincipal(
  db: Db,
  tenant: string,
  principal: string,
  taskId: string,
): Promise<Task | undefined> {
  if (!isWellFormedTaskId(taskId)) return undefined;
  const row = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', taskId)
    .where('tenant', '=', tenant)
    .where('principal', '=', principal)
    .executeTakeFirst();
  return row === undefined ? undefined : taskRowToTask(row);
}

/** The owner's tasks among `taskIds` in one query (listen loads); foreign and malformed ids drop out. */
export async function getTasksForPrincipal(
  db: Db,
  tenant: string,
  principal: string,
  taskIds: readonly string[],
): Promise<Task[]> {
  const ids = taskIds.filter(isWellFormedTaskId);
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', 'in', ids)
    .where('tenant', '=', tenant)
    .where('principal', '=', principal)
    .execute();
  return rows.map(taskRowToTask);
}

/**
 * One statement: lock the owner's row, keep only answers to outstanding keys (R17), merge them,
 * drop those keys from the pending requests, and when none remain move to `working`, unleased and
 * not yet enqueued (claimable; the caller wakes it). Two concurrent calls serialize on the row
 * lock, the second recomputes from the first's result, so both answers count and exactly one of
 * them sees the last key go and reports `resumed`. With nothing left to record it still locks the
 * row, so its commit waits for a synchronous standby like any write: what the primary shows of the
 * answers is then on the standby too (tasks/update acknowledges a repeated answer this way).
 */
export async function recordInputResponses(
  db: Db,
  owner: TaskOwner,
  taskId: string,
  responses: InputResponses,
): Promise<{ found: boolean; resumed: boolean }> {
  if (!isWellFormedTaskId(taskId)) return { found: false, resumed: false };
  const statement = CompiledQuery.raw(RECORD_INPUT_RESPONSES, [
    taskId,
    owner.tenant,
    owner.principal,
    JSON.stringify(responses),
    RESUMED_MESSAGE,
  ]);
  const result = await executePrepared<{ found: boolean; status: string | null }>(
    db,
    'record_input_responses',
    statement,
  );
  const row = result.rows[0];
  return { found: row?.found === true, resumed: row?.status === 'working' };
}

/** One caller's answers, for recordManyInputResponses. */
export interface InputResponsesWrite {
  owner: TaskOwner;
  taskId: string;
  responses: InputResponses;
}

/**
 * recordInputResponses for several tasks with ONE statement: each row locked, filtered, merged
 * and resumed exactly as recordInputResponses would, each write answered with its own outcome,
 * foreign, missing and malformed ids as not found. It does not wait for row locks: a row another
 * transaction holds fails the statement at once (SQLSTATE 55P03, see isLockNotAvailable) and
 * nothing is written. Throws a RangeError when two writes name the same task (a row is updated
 * once per statement: send a repeat after).
 */
export async function recordManyInputResponses(
  db: Db,
  writes: readonly InputResponsesWrite[],
): Promise<{ found: boolean; resumed: boolean }[]> {
  const sent = writes.filter((write) => isWellFormedTaskId(write.taskId));
  if (new Set(sent.map((write) => write.taskId)).size < sent.length) {
    throw new RangeError('recordManyInputResponses: one write per task');
  }
  const status = new Map<string, string | null>();
  if (sent.length > 0) {
    const column = <T>(pick: (write: InputResponsesWrite) => T): T[] => sent.map(pick);
    const query = CompiledQuery.raw(RECORD_MANY_INPUT_RESPONSES, [
      column((w) => w.taskId),
      column((w) => w.owner.tenant),
      column((w) => w.owner.principal),
      column((w) => JSON.stringify(w.responses)),
      RESUMED_MESSAGE,
    ]);
    const { rows } = await executePrepared<{ id: string; status: string | null }>(
      db,
      'record_many_input_responses',
      query,
    );
    for (const row of rows) status.set(row.id, row.status);
  }
  // A row found is the owner's (the statement matched the owner), so the id alone names it.
  return writes.map((write) => {
    const found = isWellFormedTaskId(write.taskId) && status.has(write.taskId);
    return { found, resumed: found && status.get(write.taskId) === 'working' };
  });
}

/**
 * Records the cancel intent once (idempotent; a terminal task keeps its status and only gains the
 * timestamp, R18). A task nobody holds — waiting for input, or working with no live lease — is
 * cancelled on the spot, since no worker would ever see the request; a held task is left to its
 * worker, which learns of it from renewLease / claimLease and may still complete.
 */
export async function requestCancel(
  db: Db,
  owner: TaskOwner,
  taskId: string,
): Promise<{ found: boolean; cancelledDirectly: boolean }> {
  if (!isWellFormedTaskId(taskId)) return { found: false, cancelledDirectly: false };
  const result = await requestCancelStatement({
    taskId,
    tenant: owner.tenant,
    principal: owner.principal,
    cancelledMessage: CANCELLED_BY_REQUEST,
  }).execute(db);
  const row = result.rows[0];
  return { found: row?.found === true, cancelledDirectly: row?.cancelled_directly === true };
}

/**
 * Withdraws creates whose callers were told they failed, so none of them runs: one statement that
 * cancels each task if nobody holds it (a held one gets the cancel request, as tasks/cancel does)
 * and, where the row is not there, inserts it already cancelled. That tombstone matters when the
 * create's own statement may still commit (it was waiting on a lock when its connection dropped):
 * its ON CONFLICT then skips the id, so the task never exists as `working`. Idempotent, so a
 * withdraw whose own fate is unknown is simply sent again. Only the same owner's row is touched.
 */
export async function withdrawTasks(db: Db, inputs: readonly NewTask[]): Promise<void> {
  if (inputs.length === 0) return;
  // ON CONFLICT locks the rows it meets in the order of its input: id order, as every statement
  // that waits for several rows locks them (sql/row-locks.ts).
  const sorted = [...inputs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const column = <T>(pick: (input: NewTask) => T): T[] => sorted.map(pick);
  await withdrawTasksStatement({
    withdrawnMessage: WITHDRAWN_MESSAGE,
    ids: column((i) => i.id),
    tenants: column((i) => i.owner.tenant),
    principals: column((i) => i.owner.principal),
    toolNames: column((i) => i.operation.toolName),
    ttlMs: column((i) => i.ttlMs),
  }).execute(db);
}
