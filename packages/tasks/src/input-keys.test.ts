import { describe, expect, it } from 'vitest';
import { InputKeyReusedError, acceptInputResponses, issueInputKeys } from './input-keys.js';

const ask = { method: 'elicitation/create', params: { mode: 'form', message: 'ok?' } };

describe('input keys', () => {
  it('appends a fresh round to the keys issued so far', () => {
    expect(issueInputKeys(['a'], { b: ask, c: ask })).toEqual(['a', 'b', 'c']);
  });

  it('refuses a key issued in an earlier round, answered or not', () => {
    expect(() => issueInputKeys(['a', 'b'], { b: ask, d: ask })).toThrow(InputKeyReusedError);
    expect(() => issueInputKeys(['a', 'b'], { b: ask })).toThrow(
      'input keys already issued for this task: b',
    );
  });

  it('refuses an empty round', () => {
    expect(() => issueInputKeys([], {})).toThrow(RangeError);
  });

  it('accepts only answers to outstanding keys and keeps the rest pending', () => {
    const answer = { action: 'accept', content: { approved: true } };
    const result = acceptInputResponses({ a: ask, b: ask }, { a: answer, zzz: answer });
    expect(result).toEqual({ accepted: { a: answer }, stillPending: { b: ask } });
  });
});
