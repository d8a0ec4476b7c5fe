import type { InputRequests, InputResponses } from './task.js';

export class InputKeyReusedError extends Error {
  constructor(readonly keys: string[]) {
    super(`input keys already issued for this task: ${keys.join(', ')}`);
    this.name = 'InputKeyReusedError';
  }
}

/**
 * Admits a new round of input requests. Keys are unique for the task's whole life (R16), so a key
 * issued before, answered or not, can never be issued again.
 */
export function issueInputKeys(
  issuedInputKeys: readonly string[],
  requests: InputRequests,
): string[] {
  const fresh = Object.keys(requests);
  if (fresh.length === 0) throw new RangeError('an input round needs at least one request');
  const reused = fresh.filter((key) => issuedInputKeys.includes(key));
  if (reused.length > 0) throw new InputKeyReusedError(reused);
  return [...issuedInputKeys, ...fresh];
}

export interface AcceptedResponses {
  /** The responses that answer an outstanding key; everything else is ignored (R17). */
  accepted: InputResponses;
  /** Outstanding requests still unanswered after this update. */
  stillPending: InputRequests;
}

/** Splits an update into the answers that count and what remains outstanding. */
export function acceptInputResponses(
  pending: InputRequests,
  responses: InputResponses,
): AcceptedResponses {
  const accepted: InputResponses = {};
  const stillPending: InputRequests = {};
  for (const [key, request] of Object.entries(pending)) {
    const response = responses[key];
    if (response === undefined) stillPending[key] = request;
    else accepted[key] = response;
  }
  return { accepted, stillPending };
}
