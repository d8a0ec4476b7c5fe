import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import {
  CreateOverloadedError,
  ReplicaLagError,
  StoreUnavailableError,
  UnstorableArgumentsError,
  infrastructureFailure,
} from '@mcp-tasks/store';
import { retryLater, storeUnavailable } from '../errors.js';

/** The create queue's bounds by the name an operator sets them with. */
const OVERLOAD_SETTING = {
  queue_length: 'MCP_CREATE_QUEUE_MAX',
  queue_age: 'MCP_CREATE_QUEUE_MAX_AGE_MS',
} as const;

/**
 * What the client is told when a create failed in the store. Every such failure has left nothing
 * that will run, except a derived id (the final MRTR round), which is kept so that the retry of
 * the exact call gets that task: the message says which, and what to do.
 */
export function createFailure(error: unknown, derivedId: boolean): unknown {
  if (error instanceof CreateOverloadedError) {
    const setting = OVERLOAD_SETTING[error.overload];
    const why =
      error.overload === 'queue_length'
        ? `${error.limit} creates are already waiting for the database`
        : `the create waited ${error.limit} ms for the database`;
    return retryLater({
      reason: 'overloaded',
      message: `Server overloaded: ${why} (${setting}); nothing was started. Retry after the Retry-After delay.`,
      retryAfterMs: 1_000,
      data: { limit: setting, value: error.limit },
    });
  }
  if (error instanceof ReplicaLagError) {
    return retryLater({
      reason: 'replica_lag',
      message: derivedId
        ? 'The read replica is lagging, so the task could not be handed out yet; it is kept, not withdrawn. Retry this exact call (same requestState and answers) to get its handle.'
        : 'The read replica is lagging, so the task could not be handed out; nothing will run. Retry the call.',
      retryAfterMs: 1_000,
    });
  }
  if (error instanceof StoreUnavailableError) {
    // The same words as any other store outage (errors.ts), and what became of this create.
    return storeUnavailable(
      infrastructureFailure(error.cause),
      error.kept
        ? 'the task is kept if it was recorded: retry this exact call (same requestState and answers) to get its handle'
        : 'nothing will run: retry the call',
    );
  }
  // The gateway refuses such arguments before a create (findUnstorableText, MAX_PARAMS_DEPTH);
  // a tool that rewrites its arguments could still produce them.
  if (error instanceof UnstorableArgumentsError) {
    return new ProtocolError(
      ErrorCode.InvalidParams,
      `Invalid params: the tool's arguments cannot be stored (${error.message.replace(/^task \S+ arguments cannot be stored: /, '')})`,
    );
  }
  return error;
}
