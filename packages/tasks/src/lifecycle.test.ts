import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputKeyReusedError } from './input-keys.js';
import {
  applyTaskEvent,
  initialLifecycleState,
  type LifecycleState,
  type TaskEvent,
} from './lifecycle.js';
import { IllegalTransitionError, isTerminalStatus } from './status.js';
import { taskEventArbitrary } from './testing/task-event-arbitrary.js';

const ask = { method: 'elicitation/create', params: { mode: 'form', message: 'ok?' } };
const accept = { action: 'accept', content: {} };

function run(events: TaskEvent[]): LifecycleState {
  return events.reduce(applyTaskEvent, initialLifecycleState('Starting.'));
}

describe('task lifecycle', () => {
  it('pauses for input and resumes only when every key is answered', () => {
    let state = run([{ type: 'request_input', requests: { a: ask, b: ask }, statusMessage: null }]);
    expect(state.status).toBe('input_required');
    state = applyTaskEvent(state, { type: 'respond', responses: { a: accept } });
    expect(state.status).toBe('input_required');
    expect(state.inputRequests).toEqual({ b: ask });
    state = applyTaskEvent(state, { type: 'respond', responses: { b: accept, a: accept } });
    expect(state.status).toBe('working');
    expect(state.inputRequests).toEqual({});
    expect(state.inputResponses).toEqual({ a: accept, b: accept });
  });

  it('ignores answers to keys that are not outstanding', () => {
    const waiting = run([{ type: 'request_input', requests: { a: ask }, statusMessage: null }]);
    const after = applyTaskEvent(waiting, { type: 'respond', responses: { nope: accept } });
    expect(after).toEqual(waiting);
  });

  it('refuses a second input round that reuses a key', () => {
    const resumed = run([
      { type: 'request_input', requests: { a: ask }, statusMessage: null },
      { type: 'respond', responses: { a: accept } },
    ]);
    expect(() =>
      applyTaskEvent(resumed, { type: 'request_input', requests: { a: ask }, statusMessage: null }),
    ).toThrow(InputKeyReusedError);
  });

  it('cancels a task that waits for input', () => {
    const state = run([
      { type: 'request_input', requests: { a: ask }, statusMessage: null },
      { type: 'cancel', statusMessage: 'Cancelled by the client.' },
    ]);
    expect(state).toMatchObject({ status: 'cancelled', inputRequests: {} });
  });

  it('rejects every event after a terminal state', () => {
    const done = run([{ type: 'complete', result: { content: [] } }]);
    expect(() => applyTaskEvent(done, { type: 'cancel', statusMessage: null })).toThrow(
      IllegalTransitionError,
    );
    expect(() => applyTaskEvent(done, { type: 'progress', statusMessage: 'x' })).toThrow(
      IllegalTransitionError,
    );
  });
});

describe('task lifecycle properties', () => {
  it('never leaves a terminal state and never reissues a key, whatever the events', () => {
    fc.assert(
      fc.property(fc.array(taskEventArbitrary, { maxLength: 40 }), (events) => {
        let state = initialLifecycleState();
        let terminal: LifecycleState | undefined;
        for (const event of events) {
          let next: LifecycleState;
          try {
            next = applyTaskEvent(state, event);
          } catch (error) {
            // A refused event changes nothing.
            expect(error).toSatisfy(
              (e) => e instanceof IllegalTransitionError || e instanceof InputKeyReusedError,
            );
            continue;
          }
          if (terminal) expect(next).toEqual(terminal);
          expect(new Set(next.issuedInputKeys).size).toBe(next.issuedInputKeys.length);
          for (const key of Object.keys(next.inputRequests)) {
            expect(next.issuedInputKeys).toContain(key);
          }
          expect(Object.keys(next.inputRequests).length > 0).toBe(next.status === 'input_required');
          if (isTerminalStatus(next.status)) terminal ??= next;
          state = next;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
