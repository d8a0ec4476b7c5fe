import { TASK_STATUSES } from '@mcp-tasks/tasks';
import { z } from 'zod';

/**
 * The history of a load-test run: one JSON object per line, each with a `kind` and a time `t`.
 *
 * `t` (and a step's `startMs`/`endMs`) is wall-clock milliseconds with sub-millisecond precision,
 * taken as `performance.timeOrigin + performance.now()`: monotonic within a process, and comparable
 * across the processes of one host (the workers' step log uses the same clock).
 */
const Time = z.number().nonnegative();
const TaskStatus = z.enum(TASK_STATUSES);
const Json = z.json();

/** The first line: what was run, and the bound within which every task must end. */
export const RunRecordSchema = z.object({
  kind: z.literal('run'),
  t: Time,
  /** Longest time from an acknowledged create to a terminal status (unless a create says otherwise). */
  taskBoundMs: z.number().int().positive(),
  seed: z.union([z.string(), z.number()]).optional(),
  config: z.record(z.string(), Json).optional(),
});

/** A request sent to one replica. `op` pairs it with its reply. */
export const RequestRecordSchema = z.object({
  kind: z.literal('request'),
  t: Time,
  op: z.number().int().nonnegative(),
  replica: z.string(),
  tenant: z.string(),
  method: z.string(),
  taskId: z.string().optional(),
  /** tools/call: the tool and its arguments (results are checked against them). */
  tool: z.string().optional(),
  arguments: z.record(z.string(), Json).optional(),
  /** tasks/update: the input keys answered. */
  inputKeys: z.array(z.string()).optional(),
  /** tools/call: a bound for this task other than the run's `taskBoundMs`. */
  boundMs: z.number().int().positive().optional(),
  /** Sent by a tenant that does not own the task: only the unknown-id error is a right answer. */
  probe: z.boolean().optional(),
  /** tools/call: the trace id of the client's span for this task, when the run exports traces. */
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
});

/**
 * The reply to `op`. A success has neither `errorCode` nor `errorMessage`; a JSON-RPC error has
 * both; a transport failure (connection refused or reset, timeout, a body that is not JSON-RPC)
 * has `errorMessage` only, and `httpStatus` when there was a response.
 */
export const ReplyRecordSchema = z.object({
  kind: z.literal('reply'),
  t: Time,
  op: z.number().int().nonnegative(),
  replica: z.string(),
  tenant: z.string(),
  method: z.string(),
  taskId: z.string().optional(),
  httpStatus: z.number().int().optional(),
  status: TaskStatus.optional(),
  /** input_required: the keys of the input requests outstanding. */
  inputKeys: z.array(z.string()).optional(),
  /** completed: the inlined CallToolResult. */
  result: Json.optional(),
  errorCode: z.number().int().optional(),
  errorMessage: z.string().optional(),
  /** The `Retry-After` header of an error reply, as sent. */
  retryAfter: z.string().optional(),
  /** `error.data.reason` of a JSON-RPC error (e.g. `store_unavailable`). */
  errorReason: z.string().optional(),
});

/**
 * A task snapshot pushed on the `subscriptions/listen` stream that request `op` opened
 * (`notifications/tasks`). Messages of one stream arrive in the order the server sent them, so
 * each counts as seen after the one before it on that stream.
 */
export const NotificationRecordSchema = z.object({
  kind: z.literal('notification'),
  t: Time,
  op: z.number().int().nonnegative(),
  replica: z.string(),
  tenant: z.string(),
  taskId: z.string(),
  status: TaskStatus,
  inputKeys: z.array(z.string()).optional(),
  result: Json.optional(),
});

/** Something the chaos plan did (a kill, a restart, a pause), and to what. */
export const ChaosRecordSchema = z.object({
  kind: z.literal('chaos'),
  t: Time,
  id: z.string(),
  plan: z.string(),
  action: z.string(),
  /** The process or service acted on: a worker id, a replica name, `redis`, `postgres`. */
  target: z.string(),
  /**
   * What the harness observed of the act (the process's pid, the signal it exited with, its
   * /proc state, the connections a partition reset), so a test can tell it really happened.
   */
  evidence: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .optional(),
});

/**
 * After the chaos stopped: how many rounds each plan of the run began, in the run's order. A plan
 * with 0 never had its phase (`--chaos all` runs them one after another until the load ends).
 */
export const ChaosRoundsRecordSchema = z.object({
  kind: z.literal('chaos-rounds'),
  t: Time,
  plans: z.array(z.object({ plan: z.string(), rounds: z.number().int().nonnegative() })),
});

/** One line of a worker's step log (STEP_LOG=on, apps/worker/src/attempt/step-log.ts). */
export const StepRecordSchema = z.object({
  kind: z.literal('step'),
  phase: z.enum(['start', 'end']),
  taskId: z.string(),
  step: z.string(),
  epoch: z.number().int(),
  worker: z.string(),
  startMs: Time,
  endMs: Time.optional(),
  outcome: z.string().optional(),
  /** On end lines: the worker's local lease deadline when the step ended (same clock as endMs). */
  leaseDeadlineMs: Time.optional(),
});

/** After the load stopped: one read of one task from one replica, by its owner. */
export const FinalReadRecordSchema = z.object({
  kind: z.literal('final'),
  t: Time,
  replica: z.string(),
  tenant: z.string(),
  taskId: z.string(),
  status: TaskStatus.optional(),
  result: Json.optional(),
  httpStatus: z.number().int().optional(),
  errorCode: z.number().int().optional(),
  errorMessage: z.string().optional(),
  retryAfter: z.string().optional(),
  errorReason: z.string().optional(),
});

/**
 * After the load stopped: the ledger of the `transfer_funds` tasks (examples/ledger), read from
 * Postgres, for the exactly-once check (checkEffects). Per task: the transfers its arguments
 * asked for, how many of its steps committed (`steps_saved`, plus the last step of a completed
 * task), and every transfer row the ledger holds for it, by step.
 */
export const EffectsRecordSchema = z.object({
  kind: z.literal('effects'),
  t: Time,
  tasks: z.array(
    z.object({
      taskId: z.string(),
      status: TaskStatus,
      stepsCommitted: z.number().int().min(0),
      expected: z.array(z.string()),
      recorded: z.array(z.object({ step: z.number().int(), move: z.string() })),
    }),
  ),
  /** Sum of all balances when the accounts were opened, and at the end. */
  openingTotal: z.number(),
  closingTotal: z.number(),
});

/**
 * The run was stopped early (Ctrl-C): the lifecycles running at `t` were cut short, and what
 * the interrupt may have stopped with them (gateways, workers, the database) may be gone too.
 */
export const InterruptedRecordSchema = z.object({
  kind: z.literal('interrupted'),
  t: Time,
  /** Lifecycles running at the interrupt. */
  inFlight: z.number().int().nonnegative(),
});

export const HistoryRecordSchema = z.discriminatedUnion('kind', [
  RunRecordSchema,
  RequestRecordSchema,
  ReplyRecordSchema,
  NotificationRecordSchema,
  ChaosRecordSchema,
  ChaosRoundsRecordSchema,
  StepRecordSchema,
  FinalReadRecordSchema,
  EffectsRecordSchema,
  InterruptedRecordSchema,
]);

export type RunRecord = z.infer<typeof RunRecordSchema>;
export type RequestRecord = z.infer<typeof RequestRecordSchema>;
export type ReplyRecord = z.infer<typeof ReplyRecordSchema>;
export type NotificationRecord = z.infer<typeof NotificationRecordSchema>;
export type ChaosRecord = z.infer<typeof ChaosRecordSchema>;
export type ChaosRoundsRecord = z.infer<typeof ChaosRoundsRecordSchema>;
export type StepRecord = z.infer<typeof StepRecordSchema>;
export type FinalReadRecord = z.infer<typeof FinalReadRecordSchema>;
export type EffectsRecord = z.infer<typeof EffectsRecordSchema>;
export type InterruptedRecord = z.infer<typeof InterruptedRecordSchema>;
export type HistoryRecord = z.infer<typeof HistoryRecordSchema>;
