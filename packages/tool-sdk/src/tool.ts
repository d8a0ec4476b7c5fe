import type { InputRequests, InputResponses, JsonObject, JsonValue } from '@mcp-tasks/tasks';
import type { z } from 'zod';

/**
 * The public tool contract, shared by the gateway (which lists tools, validates arguments,
 * answers sync tools and MRTR rounds, and decides task vs. sync) and the worker (which runs task
 * tools step by step). Tools never see JSON-RPC envelopes, HTTP, SQL or BullMQ. This file is the
 * stable surface: see README.md for the step model and its at-least-once contract.
 */

/** A content block of a CallToolResult; text is what our tools produce. */
export type ContentBlock = { type: 'text'; text: string } | JsonObject;

/** The body of a CallToolResult. The gateway adds `resultType` and `_meta` on the wire. */
export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: JsonObject;
  isError?: boolean;
}

/** What the calling client declared on this request (capabilities are per request, R4). */
export interface CallContext {
  /** The client declared `extensions["io.modelcontextprotocol/tasks"]`. */
  tasksDeclared: boolean;
  /** The client's declared capabilities object, as sent. */
  clientCapabilities: JsonObject;
  /** Aborted when the client goes away or the request times out: sync work should stop. */
  signal?: AbortSignal;
}

/**
 * How a `tools/call` is served:
 * - `sync`: answered in the request; never a task.
 * - `task`: only as a task; a client that did not declare the extension gets -32021.
 * - `task-optional`: a task when the client declared the extension and `prefersTask` says so
 *   (e.g. slow_compute with seconds >= 1), else answered synchronously.
 */
export type ExecutionMode = 'sync' | 'task' | 'task-optional';

/** One MRTR round before a task exists (R13). */
export type GatherOutcome<Args> =
  { kind: 'need_input'; inputRequests: InputRequests } | { kind: 'ready'; arguments: Args };

/** What one step of a task tool produced. The worker persists it before the next step. */
export type StepOutcome =
  /** Save `state` as the checkpoint and run the next step. */
  | { kind: 'continue'; state: JsonValue; statusMessage?: string }
  /** Save `state`, park the task as input_required with these fresh keys, release the lease. */
  | { kind: 'input'; state: JsonValue; inputRequests: InputRequests; statusMessage?: string }
  /** Finish as completed with this result (a tool error is `isError: true` here, R19). */
  | { kind: 'complete'; result: ToolResult; statusMessage?: string }
  /** Finish as cancelled on the tool's own decision (e.g. the user declined). */
  | { kind: 'cancel'; statusMessage: string };

export interface StepContext {
  /** The task's id: stable across retries, resumes and workers. */
  taskId: string;
  /**
   * How many step outcomes the task had saved when this step began (0 for the first step): a
   * step run again from the same checkpoint sees the same index, the next step the next one.
   */
  stepIndex: number;
  /**
   * `${taskId}:${stepIndex}`: the same for every execution of this step from this checkpoint, on
   * any worker, and different for every other step. Send it with an outside effect (an HTTP
   * `Idempotency-Key`, a unique column of an upsert) so a re-run is recognised as a repeat.
   */
  idempotencyKey: string;
  /**
   * Runs `work` in this step's transaction on the service's Postgres database: the statements
   * it runs commit together with the step's outcome (its checkpoint, input round or result),
   * and only while this worker's lease still holds. A step interrupted before that commit (a
   * crash, a lost lease, a frozen worker) leaves none of them behind, and its re-run starts
   * from the same checkpoint. Calls within one step share the one transaction. A rejection of
   * `work` rolls it back and fails the step (it is retried like any unexpected throw), even if
   * the step catches it. See docs/writing-tools.md, "Exactly-once database effects".
   */
  transaction<T>(work: (tx: StepTransaction) => Promise<T>): Promise<T>;
  /** Aborted when the task is cancelled or the worker loses its lease: stop promptly. */
  signal: AbortSignal;
  /** Every answer received so far, keyed by input key. */
  inputResponses: InputResponses;
  /** Deployment knobs a tool may read (e.g. REPORT_STEP_MS). */
  settings: ToolSettings;
}

/**
 * A step's transaction: plain SQL with `$1, $2…` placeholders, on the service's database (the
 * tool's tables may live in any schema of it). No BEGIN, COMMIT or ROLLBACK of its own.
 */
export interface StepTransaction {
  query<R extends object = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: R[]; rowCount: number }>;
}

/** Deployment knobs the worker passes to every step. Tools of their own read their own env. */
export interface ToolSettings {
  /** Duration of one generate_report section, to model real work. */
  reportStepMs: number;
}

export interface ToolDefinition<Args extends JsonObject = JsonObject> {
  name: string;
  title?: string;
  description: string;
  /** The JSON Schema advertised in tools/list (an object schema, R8). */
  inputSchema: JsonObject;
  /** Validates `arguments`; a failure is -32602 with the zod issues. */
  arguments: z.ZodType<Args>;
  mode: ExecutionMode;
  /**
   * The version of this tool's checkpoint format, a positive integer (default 1). A task records
   * the version that wrote its checkpoint; raise it when a new release cannot read the old state
   * as is, and give the program a `migrateCheckpoint` hook (else such tasks fail, clearly).
   */
  version?: number;
  /** For `task-optional`: whether these arguments warrant a task. */
  prefersTask?: (args: Args) => boolean;
  /** Optional MRTR rounds before a task is created or a sync result is produced. */
  gatherInput?: (
    args: Args,
    inputResponses: InputResponses,
    call: CallContext,
  ) => GatherOutcome<Args>;
  /** Sync execution (mode `sync`, or `task-optional` when not a task). Throw ProtocolError to fail. */
  runSync?: (args: Args, call: CallContext) => Promise<ToolResult>;
  /** Task execution as steps. Required for `task` and `task-optional`. */
  task?: TaskProgram<Args>;
}

/**
 * A task tool as a resumable step machine: `start` gives the first checkpoint, `step` advances it.
 *
 * At least once: the worker saves the state a step returns before it runs the next one. A step
 * that was interrupted before its outcome was saved (a crash, a kill, a lost lease) runs again,
 * from the same state, on this or another worker. Its writes to the service's Postgres made
 * through `ctx.transaction` commit with that outcome, so they happen exactly once; any other
 * outside effect must be idempotent (send `ctx.idempotencyKey` with it) or checked for first.
 * The state a step returns must be all it needs to go on.
 *
 * Failures: return `complete` with `isError: true` for a failure the model should see (R19);
 * throw a ProtocolError to fail the task with that JSON-RPC error (no retry); any other throw is
 * unexpected and retried with backoff until the retry budget is spent, then the task fails.
 */
export interface TaskProgram<Args extends JsonObject = JsonObject> {
  initialStatusMessage: string;
  start: (args: Args) => JsonValue;
  step: (state: JsonValue, args: Args, ctx: StepContext) => Promise<StepOutcome>;
  /**
   * Upgrades a checkpoint written by an older `version` of this tool to the current format.
   * Called once, before the first step of the attempt that meets it; the result is saved with the
   * current version. Throw (any error) if it cannot be upgraded: the task then fails with -32603.
   */
  migrateCheckpoint?: (state: JsonValue, fromVersion: number, args: Args) => JsonValue;
}
