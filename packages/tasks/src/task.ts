import type { JsonObject, JsonValue } from './json.js';
import type { TaskStatus } from './status.js';

/** What the task runs. Only `tools/call` is task-augmentable today; the union leaves room. */
export interface TaskOperation {
  method: 'tools/call';
  toolName: string;
  arguments: JsonObject;
}

/** A JSON-RPC error as a failed task carries it (R19). */
export interface TaskError {
  code: number;
  message: string;
  data?: JsonValue;
}

/**
 * An input request, keyed by its input key: an `elicitation/create`, `sampling/createMessage` or
 * `roots/list` request object. Opaque to the domain; the protocol package validates its shape.
 */
export type InputRequests = Record<string, JsonObject>;
/** Answers to input requests, keyed by the input key they answer. */
export type InputResponses = Record<string, JsonObject>;

/** Who owns a task. Every task method resolves a task only through its owner (R12, R15). */
export interface TaskOwner {
  tenant: string;
  principal: string;
}

export interface Lease {
  owner: string;
  expiresAt: Date;
  /** Fencing token: bumped on every claim; a write carrying an older epoch is rejected. */
  epoch: number;
}

/** The durable task record, as the domain sees it (the store maps rows to this). */
export interface Task {
  id: string;
  owner: TaskOwner;
  operation: TaskOperation;
  status: TaskStatus;
  statusMessage: string | null;
  createdAt: Date;
  lastUpdatedAt: Date;
  /** Lifetime from creation, or null for no declared limit (R20). */
  ttlMs: number | null;
  pollIntervalMs: number | null;
  /** Set only when status is `completed`: the CallToolResult body (no resultType, no _meta). */
  result: JsonObject | null;
  /** Set only when status is `failed`. */
  error: TaskError | null;
  /** Outstanding input requests; non-empty only when status is `input_required`. */
  inputRequests: InputRequests;
  /** Every input key ever issued for this task, so none is reused (R16). */
  issuedInputKeys: string[];
  /** Every answer received for an issued key, kept for the worker to resume with. */
  inputResponses: InputResponses;
  cancelRequestedAt: Date | null;
  /** The worker's step state; resuming starts from here, not from the beginning. */
  checkpoint: JsonValue | null;
  lease: Lease | null;
  /** The epoch of the most recent claim (0 before any); kept after the lease is released. */
  leaseEpoch: number;
  /** Claims so far: every execution begun, including each resume after input. */
  attempts: number;
  /**
   * Executions that ended abnormally: an unexpected error, or a worker that vanished holding the
   * lease. The retry budget counts these, never a clean pause for input.
   */
  failures: number;
}
