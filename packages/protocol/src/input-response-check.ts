import { ErrorCode, ProtocolError } from './errors.js';
import { describeType, isPlainObject } from './json.js';
import { CreateMessageResultSchema, ListRootsResultSchema } from './mrtr.js';

/**
 * Checks each answer to an outstanding input key against what its request asked for, before the
 * answer is accepted: an answer that consumes a key but cannot be used would make the task
 * unrecoverable (the key is no longer outstanding, so the right answer sent next is ignored).
 * Answers to keys without an outstanding request are not checked here: they are ignored (R17).
 */
export interface InputResponseProblem {
  key: string;
  /** What is wrong, starting with the path inside the answer. */
  problem: string;
  /** The shape the request asked for, in words a person can act on. */
  expected: string;
}

const ACTIONS = ['accept', 'decline', 'cancel'] as const;

export function checkInputResponses(
  requests: Record<string, unknown>,
  responses: Record<string, unknown>,
): InputResponseProblem[] {
  const problems: InputResponseProblem[] = [];
  for (const [key, response] of Object.entries(responses)) {
    if (!Object.hasOwn(requests, key)) continue;
    const request = requests[key];
    const problem = checkOne(request, response);
    if (problem !== undefined) problems.push({ key, problem, expected: describeExpected(request) });
  }
  return problems;
}

/** One -32602 naming every bad key, what is wrong with it and what it should look like. */
export function inputResponsesError(problems: InputResponseProblem[]): ProtocolError {
  const summary = problems
    .map((p) => `inputResponses.${p.key}: ${p.problem}; expected ${p.expected}`)
    .join(' | ');
  return new ProtocolError(ErrorCode.InvalidParams, `Invalid ${summary}`, {
    inputResponses: problems,
  });
}

function methodOf(request: unknown): string | undefined {
  return isPlainObject(request) && typeof request.method === 'string' ? request.method : undefined;
}

function formSchemaOf(request: unknown): FormSchema | undefined {
  if (!isPlainObject(request) || !isPlainObject(request.params)) return undefined;
  if (request.params.mode === 'url') return undefined;
  const schema = request.params.requestedSchema;
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return undefined;
  const required = Array.isArray(schema.required)
    ? schema.required.filter((name): name is string => typeof name === 'string')
    : [];
  return {
    properties: schema.properties as Record<string, FieldSchema>,
    required,
    closed: schema.additionalProperties === false,
  };
}

function checkOne(request: unknown, response: unknown): string | undefined {
  switch (methodOf(request)) {
    case 'elicitation/create':
      return checkElicitResult(formSchemaOf(request), response);
    case 'sampling/createMessage':
      return firstIssue(CreateMessageResultSchema.safeParse(response));
    case 'roots/list':
      return firstIssue(ListRootsResultSchema.safeParse(response));
    default:
      // A request kind this build does not know: its receiver checks the answer.
      return undefined;
  }
}

function firstIssue(parsed: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}): string | undefined {
  if (parsed.success) return undefined;
  const issue = parsed.error?.issues[0];
  if (issue === undefined) return 'is malformed';
  const path = issue.path.map(String).join('.');
  return `${path === '' ? '(answer)' : path}: ${issue.message}`;
}

interface FormSchema {
  properties: Record<string, FieldSchema>;
  required: string[];
  /** `additionalProperties: false`; otherwise, as in JSON Schema, other fields are allowed. */
  closed: boolean;
}

/** A field of an MCP form elicitation (PrimitiveSchemaDefinition), as far as it constrains a value. */
interface FieldSchema {
  type?: unknown;
  enum?: unknown;
  oneOf?: unknown;
  format?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  minItems?: unknown;
  maxItems?: unknown;
  items?: { enum?: unknown; anyOf?: unknown };
}

function checkElicitResult(form: FormSchema | undefined, response: unknown): string | undefined {
  if (!isPlainObject(response)) return `must be an object, got ${describeType(response)}`;
  const action = response.action;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    return `action: must be one of ${ACTIONS.map((a) => JSON.stringify(a)).join(', ')}`;
  }
  const content = response.content;
  if (content !== undefined && !isPlainObject(content)) {
    return `content: must be an object, got ${describeType(content)}`;
  }
  if (action !== 'accept' || form === undefined) return undefined;
  const values = content ?? {};
  for (const name of form.required) {
    if (values[name] === undefined) return `content.${name}: is required`;
  }
  const fields = Object.keys(form.properties);
  for (const [name, value] of Object.entries(values)) {
    const field = Object.hasOwn(form.properties, name) ? form.properties[name] : undefined;
    if (field === undefined) {
      if (!form.closed) continue;
      return `content.${name}: is not a field of this form (fields: ${fields.join(', ')})`;
    }
    const problem = checkField(field, value);
    if (problem !== undefined) return `content.${name}${problem}`;
  }
  return undefined;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

/** The allowed values of a single- or multi-select enum: `enum: [...]` or `oneOf/anyOf: [{const}]`. */
function allowedValues(list: unknown, consts: unknown): string[] | undefined {
  if (Array.isArray(list)) return list.filter((v): v is string => typeof v === 'string');
  if (Array.isArray(consts)) {
    return consts
      .map((option) => (isPlainObject(option) ? option.const : undefined))
      .filter((v): v is string => typeof v === 'string');
  }
  return undefined;
}

const oneOfMessage = (allowed: string[]): string =>
  `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Returns the problem as a path suffix plus message (": ..." or "[i]: ..."), or undefined. */
function checkField(field: FieldSchema, value: unknown): string | undefined {
  switch (field.type) {
    case 'string': {
      if (typeof value !== 'string') return `: must be a string, got ${describeType(value)}`;
      const allowed = allowedValues(field.enum, field.oneOf);
      if (allowed !== undefined && !allowed.includes(value)) return `: ${oneOfMessage(allowed)}`;
      const min = num(field.minLength);
      const max = num(field.maxLength);
      const length = [...value].length;
      if (min !== undefined && length < min) return `: must be at least ${min} characters`;
      if (max !== undefined && length > max) return `: must be at most ${max} characters`;
      return checkFormat(field.format, value);
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        return `: must be a number, got ${describeType(value)}`;
      }
      if (field.type === 'integer' && !Number.isInteger(value)) return ': must be an integer';
      const min = num(field.minimum);
      const max = num(field.maximum);
      if (min !== undefined && value < min) return `: must be >= ${min}`;
      if (max !== undefined && value > max) return `: must be <= ${max}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean'
        ? undefined
        : `: must be a boolean, got ${describeType(value)}`;
    case 'array': {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
        return `: must be an array of strings, got ${describeType(value)}`;
      }
      const min = num(field.minItems);
      const max = num(field.maxItems);
      if (min !== undefined && value.length < min) return `: must have at least ${min} item(s)`;
      if (max !== undefined && value.length > max) return `: must have at most ${max} item(s)`;
      const allowed = allowedValues(field.items?.enum, field.items?.anyOf);
      if (allowed === undefined) return undefined;
      const index = value.findIndex((item) => !allowed.includes(item));
      return index < 0 ? undefined : `[${index}]: ${oneOfMessage(allowed)}`;
    }
    default:
      // A field type the form spec does not define: the receiver checks it.
      return undefined;
  }
}

function checkFormat(format: unknown, value: string): string | undefined {
  switch (format) {
    case 'email':
      return EMAIL.test(value) ? undefined : ': must be an email address';
    case 'uri':
      return URL.canParse(value) ? undefined : ': must be a URI';
    case 'date':
      return isCalendarDate(value) ? undefined : ': must be a date (YYYY-MM-DD)';
    case 'date-time':
      return DATE_TIME.test(value) &&
        isCalendarDate(value.slice(0, 10)) &&
        !Number.isNaN(Date.parse(value))
        ? undefined
        : ': must be an RFC 3339 date-time';
    default:
      return undefined;
  }
}

function describeField(field: FieldSchema): string {
  const allowed =
    field.type === 'array'
      ? allowedValues(field.items?.enum, field.items?.anyOf)
      : allowedValues(field.enum, field.oneOf);
  if (allowed !== undefined) {
    const options = allowed.map((v) => JSON.stringify(v)).join(' | ');
    return field.type === 'array' ? `array of ${options}` : options;
  }
  if (typeof field.format === 'string') return `${String(field.type)} (${field.format})`;
  return typeof field.type === 'string' ? field.type : 'value';
}

function describeExpected(request: unknown): string {
  switch (methodOf(request)) {
    case 'elicitation/create': {
      const form = formSchemaOf(request);
      if (form === undefined) {
        return 'an ElicitResult: {"action": "accept"} or {"action": "decline"} or {"action": "cancel"}';
      }
      const fields = Object.entries(form.properties)
        .map(
          ([name, field]) =>
            `${name}: ${describeField(field)}${form.required.includes(name) ? ' (required)' : ''}`,
        )
        .join(', ');
      return `an ElicitResult: {"action": "accept", "content": {${fields}}} or {"action": "decline"} or {"action": "cancel"}`;
    }
    case 'sampling/createMessage':
      return 'a CreateMessageResult: {"role", "content", "model", "stopReason"?}';
    case 'roots/list':
      return 'a ListRootsResult: {"roots": [{"uri", "name"?}]}';
    default:
      return 'the result of the request';
  }
}
