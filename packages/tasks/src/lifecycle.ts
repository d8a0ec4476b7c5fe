import type { JsonObject } from './json.js';
import { acceptInputResponses, issueInputKeys } from './input-keys.js';
import { IllegalTransitionError, assertTransition, type TaskStatus } from './status.js';
import type { InputRequests, InputResponses, Task, TaskError } from './task.js';

/** The part of a task that the lifecycle rules govern. */
export type LifecycleState = Pick<
  Task,
  | 'status'
  | 'statusMessage'
  | 'inputRequests'
  | 'issuedInputKeys'
  | 'inputResponses'
  | 'result'
  | 'error'
>;

export type TaskEvent =
  | { type: 'progress'; statusMessage: string | null }
  | { type: 'request_input'; requests: InputRequests; statusMessage: string | null }
  | { type: 'respond'; responses: InputResponses }
  | { type: 'complete'; result: JsonObject }
  | { type: 'fail'; error: TaskError; statusMessage: string | null }
  | { type: 'cancel'; statusMessage: string | null };

export function initialLifecycleState(statusMessage: string | null = null): LifecycleState {
  return {
    status: 'working',
    statusMessage,
    inputRequests: {},
    issuedInputKeys: [],
    inputResponses: {},
    result: null,
    error: null,
  };
}

/**
 * Applies one event, or throws (IllegalTransitionError, InputKeyReusedError) and changes nothing.
 * A `respond` that answers nothing outstanding is not an error: it is ignored (R17).
 */
export function applyTaskEvent(state: LifecycleState, event: TaskEvent): LifecycleState {
  const move = (to: TaskStatus): void => assertTransition(state.status, to);
  switch (event.type) {
    case 'progress':
      // Progress is reported by the lease holder, so only while working.
      if (state.status !== 'working') throw new IllegalTransitionError(state.status, 'working');
      return { ...state, statusMessage: event.statusMessage };
    case 'request_input': {
      move('input_required');
      const issuedInputKeys = issueInputKeys(state.issuedInputKeys, event.requests);
      return {
        ...state,
        status: 'input_required',
        statusMessage: event.statusMessage,
        inputRequests: event.requests,
        issuedInputKeys,
      };
    }
    case 'respond': {
      if (state.status !== 'input_required') return state;
      const { accepted, stillPending } = acceptInputResponses(state.inputRequests, event.responses);
      const inputResponses = { ...state.inputResponses, ...accepted };
      if (Object.keys(stillPending).length > 0) {
        return { ...state, inputRequests: stillPending, inputResponses };
      }
      return { ...state, status: 'working', inputRequests: {}, inputResponses };
    }
    case 'complete':
      move('completed');
      return { ...state, status: 'completed', inputRequests: {}, result: event.result };
    case 'fail':
      move('failed');
      return {
        ...state,
        status: 'failed',
        statusMessage: event.statusMessage,
        inputRequests: {},
        error: event.error,
      };
    case 'cancel':
      move('cancelled');
      return {
        ...state,
        status: 'cancelled',
        statusMessage: event.statusMessage,
        inputRequests: {},
      };
  }
}
