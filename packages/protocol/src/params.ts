import type { z } from 'zod';
import { ErrorCode, ProtocolError } from './errors.js';

export interface ParamIssue {
  path: string;
  message: string;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = 'params';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** Flattens zod issues into `{path, message}` pairs that name the offending params field. */
export function describeIssues(error: z.ZodError): ParamIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

/** An -32602 whose message names every offending path and whose data lists them. */
export function invalidParamsError(issues: ParamIssue[], prefix = 'Invalid params'): ProtocolError {
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return new ProtocolError(ErrorCode.InvalidParams, `${prefix}: ${summary}`, { issues });
}

/** Parses a method's params with its schema or throws ProtocolError -32602 naming the paths. */
export function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  throw invalidParamsError(describeIssues(parsed.error));
}

const NUL_PROBLEM = 'contains a NUL character (U+0000), which cannot be stored';
const surrogateProblem = (code: number) =>
  `contains a lone UTF-16 surrogate (U+${code.toString(16).toUpperCase()}), which cannot be stored`;
/** With the u flag a string is read by code points: only an unpaired surrogate is one of these. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** What makes a string unstorable, or undefined: U+0000, or a surrogate without its pair. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_PROBLEM;
  const lone = LONE_SURROGATE.exec(text);
  return lone === null ? undefined : surrogateProblem(lone[0].charCodeAt(0));
}

/**
 * The first string (value or object key) in `value` that Postgres text and jsonb cannot hold —
 * one with U+0000 or a lone UTF-16 surrogate — as a params issue; it would otherwise surface as
 * a 500 at the first write. Recursive: call it on values within MAX_PARAMS_DEPTH (findTooDeep).
 */
export function findUnstorableText(
  value: unknown,
  path: PropertyKey[] = [],
): ParamIssue | undefined {
  if (typeof value === 'string') {
    const problem = unstorable(value);
    return problem === undefined ? undefined : { path: formatPath(path), message: problem };
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const issue = findUnstorableText(item, [...path, index]);
      if (issue !== undefined) return issue;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const problem = unstorable(key);
      if (problem !== undefined) {
        return { path: `${formatPath([...path, key])} (the key)`, message: problem };
      }
      const issue = findUnstorableText(item, [...path, key]);
      if (issue !== undefined) return issue;
    }
  }
  return undefined;
}

/**
 * How deep params may nest: `params` itself is level 1, each array or object inside it one more.
 * Every recursive walk of a request (validation, the unstorable-text scan, the MRTR argument
 * digest, the create's comparison) relies on it, and no MCP request needs more.
 */
export const MAX_PARAMS_DEPTH = 64;

/**
 * The path of the first array or object nested deeper than `maxDepth` levels in `value` (itself
 * level 1), or undefined. Iterative, so a value nested 100 000 deep is measured, not a stack
 * overflow.
 */
export function findTooDeep(value: unknown, maxDepth: number): PropertyKey[] | undefined {
  interface Node {
    value: object;
    depth: number;
    key: PropertyKey | undefined;
    parent: Node | undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Node[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.depth > maxDepth) {
      const path: PropertyKey[] = [];
      for (let at: Node | undefined = node; at?.parent !== undefined; at = at.parent) {
        path.push(at.key!);
      }
      return path.reverse();
    }
    const entries = Array.isArray(node.value)
      ? node.value.entries()
      : Object.entries(node.value as Record<string, unknown>);
    for (const [key, item] of entries) {
      if (typeof item === 'object' && item !== null) {
        stack.push({ value: item as object, depth: node.depth + 1, key, parent: node });
      }
    }
  }
  return undefined;
}

/** The -32602 for params nested deeper than MAX_PARAMS_DEPTH, naming where and the bound. */
export function tooDeepParamsError(path: readonly PropertyKey[]): ProtocolError {
  return invalidParamsError([
    {
      path: formatPath(path),
      message: `nests deeper than ${MAX_PARAMS_DEPTH} levels of arrays and objects (params counts as level 1; the limit is ${MAX_PARAMS_DEPTH})`,
    },
  ]);
}
