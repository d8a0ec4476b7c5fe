import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import {
  acceptInputResponses,
  issueInputKeys,
  type InputRequests,
  type InputResponses,
  type JsonObject,
  type JsonValue,
} from '@mcp-tasks/tasks';
import { resolveCheckpoint, toolVersion } from '../checkpoint-version.js';
import type {
  StepContext,
  StepOutcome,
  StepTransaction,
  ToolDefinition,
  ToolResult,
  ToolSettings,
} from '../tool.js';

/**
 * An in-process stand-in for the worker and the task row, for tool authors' unit tests: no
 * Postgres, no Redis. It applies the worker's rules (what is saved when, what a cancel does at
 * each point, how a ProtocolError ends a task, how checkpoint versions are read) to one task.
 */

export type HarnessStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface HarnessOptions {
  /** Defaults to a fresh id per run; pass one to test idempotency keys. */
  taskId?: string;
  settings?: Partial<ToolSettings>;
  /**
   * Where `ctx.transaction` runs: each step that asks gets a transaction, committed when the
   * harness saves the step's outcome and rolled back when the step throws or `stepAndCrash`
   * loses it. Without it, `ctx.transaction` rejects. See `pgHarnessDatabase`.
   */
  database?: HarnessDatabase;
}

/** A source of step transactions for the harness (a real Postgres in tests: pgHarnessDatabase). */
export interface HarnessDatabase {
  begin(): Promise<HarnessTransaction>;
}

export interface HarnessTransaction extends StepTransaction {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** The part of a `pg.Pool` the harness uses (kept structural: the SDK does not depend on pg). */
export interface PgPoolLike {
  connect(): Promise<{
    query(
      text: string,
      values?: unknown[],
    ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
    release(error?: Error): void;
  }>;
}

/** Step transactions on a `pg.Pool`, for `startToolTask(tool, args, { database })`. */
export function pgHarnessDatabase(pool: PgPoolLike): HarnessDatabase {
  return {
    async begin() {
      const client = await pool.connect();
      await client.query('BEGIN');
      let done = false;
      const end = async (command: 'COMMIT' | 'ROLLBACK') => {
        if (done) return;
        done = true;
        try {
          await client.query(command);
          client.release();
        } catch (error) {
          client.release(error as Error);
          if (command === 'COMMIT') throw error;
        }
      };
      return {
        async query<R extends object>(text: string, values: readonly unknown[] = []) {
          const result = await client.query(text, [...values]);
          return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
        },
        commit: () => end('COMMIT'),
        rollback: () => end('ROLLBACK'),
      };
    },
  };
}

export interface ToolRun {
  readonly taskId: string;
  readonly status: HarnessStatus;
  readonly statusMessage: string;
  /** The last saved checkpoint (what a resumed or retried attempt starts from). */
  readonly checkpoint: JsonValue;
  /** The tool version that wrote `checkpoint`. */
  readonly checkpointVersion: number;
  /** The outstanding input requests while `input_required`. */
  readonly inputRequests: InputRequests;
  /** Every answer accepted so far. */
  readonly inputResponses: InputResponses;
  readonly result: ToolResult | undefined;
  readonly error: { code: number; message: string; data?: unknown } | undefined;
  /** Steps started, including ones that threw or were thrown away by a crash. */
  readonly stepsRun: number;
  /** Step outcomes saved (checkpoints and input rounds): the next step's `ctx.stepIndex`. */
  readonly stepsSaved: number;
  /**
   * Runs one step and saves its outcome, as the worker does. An unexpected throw rejects and
   * leaves the checkpoint as it was (the worker would retry the same step); a ProtocolError
   * fails the task.
   */
  step(): Promise<StepOutcome | undefined>;
  /** Steps until the task waits for input or ends; answers the status it stopped in. */
  runUntilStop(maxSteps?: number): Promise<HarnessStatus>;
  /**
   * Runs one step and then loses its outcome, as a worker killed between the step and its
   * checkpoint would: nothing is saved, and the next step starts from the same checkpoint.
   */
  stepAndCrash(): Promise<void>;
  /** tasks/update: answers outstanding keys (others are ignored, R17); working once all are in. */
  answer(responses: InputResponses): void;
  /**
   * tasks/cancel: a step in progress sees its signal abort; a task between steps, or waiting for
   * input, is cancelled at once (a step that still completes wins, as in production).
   */
  cancel(): void;
  /** Another worker takes the saved checkpoint over, running `tool` (e.g. a newer version). */
  resumeOn(tool: ToolDefinition): ToolRun;
}

const TERMINAL: readonly HarnessStatus[] = ['completed', 'failed', 'cancelled'];
const CANCELLED_BY_REQUEST = 'Cancelled by request.';

let runs = 0;

interface Row {
  taskId: string;
  args: JsonObject;
  status: HarnessStatus;
  statusMessage: string;
  checkpoint: JsonValue;
  checkpointVersion: number;
  issuedKeys: string[];
  inputRequests: InputRequests;
  inputResponses: InputResponses;
  cancelRequested: boolean;
  result: ToolResult | undefined;
  error: { code: number; message: string; data?: unknown } | undefined;
  stepsRun: number;
  stepsSaved: number;
}

/** Creates a task for `tool` with `args` (validated as the worker would) and its first checkpoint. */
export function startToolTask(
  tool: ToolDefinition,
  args: JsonObject,
  options: HarnessOptions = {},
): ToolRun {
  const program = tool.task;
  if (program === undefined) throw new Error(`${tool.name} has no task program`);
  const parsed = tool.arguments.safeParse(args);
  if (!parsed.success) {
    throw new ProtocolError(ErrorCode.InvalidParams, `invalid arguments for ${tool.name}`, {
      issues: parsed.error.issues.map((issue) => issue.message),
    });
  }
  runs += 1;
  const row: Row = {
    taskId: options.taskId ?? `harness-${process.pid}-${runs}`,
    args: parsed.data,
    status: 'working',
    statusMessage: program.initialStatusMessage,
    checkpoint: program.start(parsed.data),
    checkpointVersion: toolVersion(tool),
    issuedKeys: [],
    inputRequests: {},
    inputResponses: {},
    cancelRequested: false,
    result: undefined,
    error: undefined,
    stepsRun: 0,
    stepsSaved: 0,
  };
  return attach(tool, row, { reportStepMs: 0, ...options.settings }, options.database);
}

/** One step's transaction, opened on its first `ctx.transaction` (as the worker's step loop). */
function stepEffects(database: HarnessDatabase | undefined) {
  let open: Promise<HarnessTransaction> | undefined;
  let failure: { error: unknown } | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  async function runWork<T>(work: (tx: StepTransaction) => Promise<T>): Promise<T> {
    if (database === undefined)
      throw new Error('ctx.transaction needs a database: startToolTask(tool, args, { database })');
    if (failure !== undefined)
      throw new Error('this step’s transaction was rolled back; the step will be run again');
    open ??= database.begin();
    try {
      return await work(await open);
    } catch (error) {
      failure ??= { error };
      await (await open.catch(() => undefined))?.rollback();
      throw error;
    }
  }
  return {
    transaction: (<T>(work: (tx: StepTransaction) => Promise<T>): Promise<T> => {
      const next = queue.then(() => runWork(work));
      queue = next.catch(() => undefined);
      return next;
    }) as StepContext['transaction'],
    failure: () => failure,
    async end(how: 'commit' | 'rollback'): Promise<void> {
      const trx = await open?.catch(() => undefined);
      open = undefined;
      if (trx === undefined || failure !== undefined) return;
      await (how === 'commit' ? trx.commit() : trx.rollback());
    },
  };
}

function attach(
  tool: ToolDefinition,
  row: Row,
  settings: ToolSettings,
  database: HarnessDatabase | undefined,
): ToolRun {
  const maybeProgram = tool.task;
  if (maybeProgram === undefined) throw new Error(`${tool.name} has no task program`);
  const attempt = new Attempt(tool, maybeProgram, row, settings, database);

  const run: ToolRun = {
    get taskId() {
      return row.taskId;
    },
    get status() {
      return row.status;
    },
    get statusMessage() {
      return row.statusMessage;
    },
    get checkpoint() {
      return row.checkpoint;
    },
    get checkpointVersion() {
      return row.checkpointVersion;
    },
    get inputRequests() {
      return { ...row.inputRequests };
    },
    get inputResponses() {
      return { ...row.inputResponses };
    },
    get result() {
      return row.result;
    },
    get error() {
      return row.error;
    },
    get stepsRun() {
      return row.stepsRun;
    },
    get stepsSaved() {
      return row.stepsSaved;
    },
    step: () => attempt.runStep(true),
    runUntilStop: (maxSteps) => attempt.runUntilStop(maxSteps),
    stepAndCrash: () => attempt.stepAndCrash(),
    answer: (responses) => attempt.answer(responses),
    cancel: () => attempt.cancel(),
    resumeOn(next) {
      if (TERMINAL.includes(row.status))
        throw new Error(`cannot resume: the task is ${row.status}`);
      return attach(next, row, settings, database);
    },
  };
  return run;
}

/** One worker's attempt at the row: steps the program and saves each outcome as the worker does. */
class Attempt {
  private controller: AbortController | undefined;
  // The state this attempt steps from: the checkpoint, upgraded once if an older version wrote it.
  private attemptState: JsonValue | undefined;

  constructor(
    private readonly tool: ToolDefinition,
    private readonly program: NonNullable<ToolDefinition['task']>,
    private readonly row: Row,
    private readonly settings: ToolSettings,
    private readonly database: HarnessDatabase | undefined,
  ) {}

  /** The state to step from, or undefined when the checkpoint is unreadable (the task failed). */
  private stateForStep(): JsonValue | undefined {
    const { tool, row } = this;
    if (this.attemptState !== undefined) return this.attemptState;
    const resolution = resolveCheckpoint(tool, row.args, row.checkpoint, row.checkpointVersion);
    switch (resolution.kind) {
      case 'current':
        this.attemptState = resolution.state;
        break;
      case 'migrated':
        row.checkpoint = resolution.state;
        row.checkpointVersion = toolVersion(tool);
        this.attemptState = resolution.state;
        break;
      case 'newer':
        throw new Error(
          `${tool.name} version ${toolVersion(tool)} cannot run a checkpoint of version ${resolution.recordedVersion}; a worker with the newer tool would take it`,
        );
      case 'unreadable':
        row.status = 'failed';
        row.error = { code: ErrorCode.InternalError, message: resolution.message };
        row.statusMessage = `Failed: ${resolution.message}`;
        return undefined;
    }
    return this.attemptState;
  }

  private requireWorking(action: string): void {
    if (this.row.status !== 'working')
      throw new Error(`cannot ${action}: the task is ${this.row.status}, not working`);
  }

  async runStep(save: boolean): Promise<StepOutcome | undefined> {
    const { row } = this;
    this.requireWorking('step');
    if (row.cancelRequested) {
      row.status = 'cancelled';
      row.statusMessage = CANCELLED_BY_REQUEST;
      return undefined;
    }
    const state = this.stateForStep();
    if (state === undefined) return undefined;
    this.controller = new AbortController();
    const signal = this.controller.signal;
    row.stepsRun += 1;
    const effects = stepEffects(this.database);
    let outcome: StepOutcome;
    try {
      outcome = await this.program.step(state, row.args, {
        taskId: row.taskId,
        stepIndex: row.stepsSaved,
        idempotencyKey: `${row.taskId}:${row.stepsSaved}`,
        signal,
        inputResponses: { ...row.inputResponses },
        settings: this.settings,
        transaction: effects.transaction,
      });
      // A transaction that failed fails the step, whatever it returned (as in the worker).
      const failed = effects.failure();
      if (failed !== undefined) throw failed.error;
    } catch (error) {
      await effects.end('rollback');
      if (!save) return undefined;
      if (signal.aborted && row.cancelRequested) {
        row.status = 'cancelled';
        row.statusMessage = CANCELLED_BY_REQUEST;
        return undefined;
      }
      if (error instanceof ProtocolError) {
        const wire = error.toJsonRpcError();
        row.status = 'failed';
        row.error = wire;
        row.statusMessage = `Failed: ${error.message}`;
        return undefined;
      }
      throw error;
    } finally {
      this.controller = undefined;
    }
    if (!save) {
      await effects.end('rollback');
      return outcome;
    }
    this.apply(outcome);
    await effects.end('commit');
    return outcome;
  }

  private apply(outcome: StepOutcome): void {
    const { row } = this;
    switch (outcome.kind) {
      case 'continue':
        // Saved even when a cancel is pending; the cancel takes effect before the next step.
        row.checkpoint = outcome.state;
        row.checkpointVersion = toolVersion(this.tool);
        row.stepsSaved += 1;
        this.attemptState = outcome.state;
        if (outcome.statusMessage !== undefined) row.statusMessage = outcome.statusMessage;
        return;
      case 'input':
        row.issuedKeys = issueInputKeys(row.issuedKeys, outcome.inputRequests);
        row.stepsSaved += 1;
        row.checkpoint = outcome.state;
        row.checkpointVersion = toolVersion(this.tool);
        this.attemptState = undefined;
        if (row.cancelRequested) {
          row.status = 'cancelled';
          row.statusMessage = CANCELLED_BY_REQUEST;
          return;
        }
        row.status = 'input_required';
        row.inputRequests = outcome.inputRequests;
        if (outcome.statusMessage !== undefined) row.statusMessage = outcome.statusMessage;
        return;
      case 'complete':
        row.status = 'completed';
        row.result = outcome.result;
        row.statusMessage = outcome.statusMessage ?? 'Completed.';
        return;
      case 'cancel':
        row.status = 'cancelled';
        row.statusMessage = outcome.statusMessage;
        return;
    }
  }

  async runUntilStop(maxSteps = 1_000): Promise<HarnessStatus> {
    const { row } = this;
    for (let i = 0; i < maxSteps; i += 1) {
      if (row.status !== 'working') return row.status;
      await this.runStep(true);
    }
    if (row.status !== 'working') return row.status;
    throw new Error(`${this.tool.name} did not stop within ${maxSteps} steps`);
  }

  async stepAndCrash(): Promise<void> {
    await this.runStep(false);
    // The next attempt re-reads the checkpoint, as a new worker would.
    this.attemptState = undefined;
  }

  answer(responses: InputResponses): void {
    const { row } = this;
    if (row.status !== 'input_required')
      throw new Error(`cannot answer: the task is ${row.status}, not input_required`);
    const { accepted, stillPending } = acceptInputResponses(row.inputRequests, responses);
    row.inputResponses = { ...row.inputResponses, ...accepted };
    row.inputRequests = stillPending;
    if (Object.keys(stillPending).length === 0) row.status = 'working';
  }

  cancel(): void {
    const { row } = this;
    if (TERMINAL.includes(row.status)) return;
    row.cancelRequested = true;
    if (this.controller !== undefined) {
      this.controller.abort('cancel');
      return;
    }
    row.status = 'cancelled';
    row.statusMessage = CANCELLED_BY_REQUEST;
  }
}
