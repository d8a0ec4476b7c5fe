/**
 * The store's internal error family. None of these is ever serialized to a client: the gateway and
 * worker map them (a StaleLeaseError means "another attempt owns this task now, stop quietly").
 */

/** A worker write lost: the fence (task id + lease epoch) no longer holds, or the task is terminal. */
export class StaleLeaseError extends Error {
  constructor(
    readonly taskId: string,
    readonly epoch: number,
  ) {
    super(`lease epoch ${epoch} on task ${taskId} is no longer current`);
    this.name = 'StaleLeaseError';
  }
}

/** The read replica did not replay a commit within the bound, so a handle would not resolve there. */
export class ReplicaLagError extends Error {
  constructor(
    readonly taskId: string,
    readonly timeoutMs: number,
    readonly replayLsn: string | null,
  ) {
    super(
      `read replica did not have task ${taskId} within ${timeoutMs} ms (replayed up to ${replayLsn ?? 'unknown'})`,
    );
    this.name = 'ReplicaLagError';
  }
}

/** The database holds migrations this build does not know: a newer release migrated it. */
export class SchemaTooNewError extends Error {
  constructor(readonly unknownMigrations: string[]) {
    super(
      `database schema is newer than this build (unknown migrations: ${unknownMigrations.join(', ')}); ` +
        'deploy a build that includes them',
    );
    this.name = 'SchemaTooNewError';
  }
}

/** The database is not migrated, or lacks migrations this build needs: run `pnpm db:migrate`. */
export class SchemaMissingError extends Error {
  constructor(readonly pendingMigrations: string[]) {
    super(
      `database schema is missing migrations ${pendingMigrations.join(', ')}; run \`pnpm db:migrate\``,
    );
    this.name = 'SchemaMissingError';
  }
}

/**
 * createTask was given an id that already names a task of another owner or another operation.
 * Ids derived from a request (idempotent retries) collide only for the same request, so this
 * means a bug or a forged derivation, never a retry.
 */
export class TaskIdConflictError extends Error {
  constructor(readonly taskId: string) {
    super(`task id ${taskId} already names a different task`);
    this.name = 'TaskIdConflictError';
  }
}

/**
 * The database failed while a create was being recorded (a refused or timed-out statement, a
 * connection lost mid-statement). Nothing of it will run: a fresh id that may have been written
 * is withdrawn (see withdrawTasks); a derived id is `kept`, since the retry names the same task.
 */
export class StoreUnavailableError extends Error {
  constructor(
    readonly taskId: string,
    readonly kept: boolean,
    options?: { cause?: unknown },
  ) {
    super(`the database failed while task ${taskId} was being created`, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Why a create was refused before it reached the database: the create queue is full or slow. */
export type CreateOverload = 'queue_length' | 'queue_age';

/**
 * A create refused because the database is not keeping up: the queue of creates waiting for the
 * next INSERT holds `limit` already (`queue_length`), or this one waited `limit` ms for a turn
 * (`queue_age`). Nothing was sent, so nothing will run.
 */
export class CreateOverloadedError extends Error {
  constructor(
    readonly overload: CreateOverload,
    readonly limit: number,
  ) {
    super(
      overload === 'queue_length'
        ? `${limit} creates are already waiting for the database`
        : `the create waited ${limit} ms for the database without being sent`,
    );
    this.name = 'CreateOverloadedError';
  }
}
