import { describe, expect, it } from 'vitest';
import { ErrorCode } from './errors.js';
import { checkInputResponses, inputResponsesError } from './input-response-check.js';

const form = (requestedSchema: Record<string, unknown>) => ({
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Please answer', requestedSchema },
});

const approve = form({
  type: 'object',
  properties: { approved: { type: 'boolean' } },
  required: ['approved'],
});

const rich = form({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 5 },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    ratio: { type: 'number', minimum: 0, maximum: 1 },
    colour: { type: 'string', enum: ['red', 'green'] },
    size: {
      type: 'string',
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
    },
    tags: {
      type: 'array',
      items: { type: 'string', enum: ['a', 'b', 'c'] },
      minItems: 1,
      maxItems: 2,
    },
    picks: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'x', title: 'X' },
          { const: 'y', title: 'Y' },
        ],
      },
    },
  },
});

function problemOf(request: unknown, response: unknown): string | undefined {
  return checkInputResponses({ k: request }, { k: response })[0]?.problem;
}

describe('checkInputResponses (issue 11, item 0)', () => {
  it('refuses the content sent without its ElicitResult envelope', () => {
    const problems = checkInputResponses(
      { approve_outline: approve },
      { approve_outline: { approved: true } },
    );
    expect(problems).toEqual([
      {
        key: 'approve_outline',
        problem: 'action: must be one of "accept", "decline", "cancel"',
        expected:
          'an ElicitResult: {"action": "accept", "content": {approved: boolean (required)}} or {"action": "decline"} or {"action": "cancel"}',
      },
    ]);
  });

  it('accepts well-formed answers, including decline and cancel without content', () => {
    expect(
      checkInputResponses(
        { a: approve, b: approve, c: approve, d: rich },
        {
          a: { action: 'accept', content: { approved: false } },
          b: { action: 'decline' },
          c: { action: 'cancel' },
          d: {
            action: 'accept',
            content: {
              name: 'Ann',
              email: 'ann@example.com',
              site: 'https://example.com/x',
              day: '2026-02-28',
              at: '2026-02-28T10:00:00Z',
              age: 40,
              ratio: 0.5,
              colour: 'red',
              size: 'l',
              tags: ['a', 'c'],
              picks: ['y'],
            },
          },
        },
      ),
    ).toEqual([]);
  });

  it('names the field, the rule it breaks and the schema it expected', () => {
    expect(problemOf(approve, { action: 'accept', content: {} })).toBe(
      'content.approved: is required',
    );
    expect(problemOf(approve, { action: 'accept' })).toBe('content.approved: is required');
    expect(problemOf(approve, { action: 'accept', content: { approved: 'yes' } })).toBe(
      'content.approved: must be a boolean, got a string',
    );
    // As in JSON Schema, other fields are allowed unless the form says additionalProperties: false.
    expect(
      problemOf(approve, { action: 'accept', content: { approved: true, extra: 1 } }),
    ).toBeUndefined();
    const closed = form({
      type: 'object',
      properties: { approved: { type: 'boolean' } },
      additionalProperties: false,
    });
    expect(problemOf(closed, { action: 'accept', content: { approved: true, extra: 1 } })).toBe(
      'content.extra: is not a field of this form (fields: approved)',
    );
    const bad = (field: string, value: unknown) =>
      problemOf(rich, { action: 'accept', content: { [field]: value } });
    expect(bad('name', 'A')).toBe('content.name: must be at least 2 characters');
    expect(bad('name', 'Annabel')).toBe('content.name: must be at most 5 characters');
    expect(bad('email', 'ann')).toBe('content.email: must be an email address');
    expect(bad('site', 'not a uri')).toBe('content.site: must be a URI');
    expect(bad('day', '2026-02-30')).toBe('content.day: must be a date (YYYY-MM-DD)');
    expect(bad('at', '2026-02-28 10:00')).toBe('content.at: must be an RFC 3339 date-time');
    expect(bad('age', 4.5)).toBe('content.age: must be an integer');
    expect(bad('age', -1)).toBe('content.age: must be >= 0');
    expect(bad('ratio', 2)).toBe('content.ratio: must be <= 1');
    expect(bad('colour', 'blue')).toBe('content.colour: must be one of "red", "green"');
    expect(bad('size', 'm')).toBe('content.size: must be one of "s", "l"');
    expect(bad('tags', [])).toBe('content.tags: must have at least 1 item(s)');
    expect(bad('tags', ['a', 'b', 'c'])).toBe('content.tags: must have at most 2 item(s)');
    expect(bad('tags', ['z'])).toBe('content.tags[0]: must be one of "a", "b", "c"');
    expect(bad('picks', ['x', 'q'])).toBe('content.picks[1]: must be one of "x", "y"');
    expect(bad('picks', 'x')).toBe('content.picks: must be an array of strings, got a string');
  });

  it('checks sampling and roots answers against their result shapes', () => {
    const sampling = {
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 },
    };
    expect(
      problemOf(sampling, { role: 'assistant', content: { type: 'text', text: 'yo' }, model: 'm' }),
    ).toBeUndefined();
    expect(problemOf(sampling, { action: 'accept' })).toBe('content: Invalid input');
    const roots = { method: 'roots/list' };
    expect(problemOf(roots, { roots: [{ uri: 'file:///x' }] })).toBeUndefined();
    expect(problemOf(roots, { roots: 'x' })).toMatch(/^roots: /);
  });

  it('ignores keys that have no outstanding request', () => {
    expect(checkInputResponses({ a: approve }, { other: { ignored: true } })).toEqual([]);
  });

  it('builds one -32602 naming every bad key, its problem and the expected shape', () => {
    const problems = checkInputResponses(
      { approve_outline: approve },
      { approve_outline: { approved: true } },
    );
    const error = inputResponsesError(problems);
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toBe(
      'Invalid inputResponses.approve_outline: action: must be one of "accept", "decline", "cancel"; expected an ElicitResult: {"action": "accept", "content": {approved: boolean (required)}} or {"action": "decline"} or {"action": "cancel"}',
    );
    expect(error.data).toEqual({ inputResponses: problems });
  });
});
