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

/**
 * The first string (value or object key) holding U+0000 in `value`, as a params issue. Postgres
 * text and jsonb cannot hold it, so it would otherwise surface as a 500 at the first write.
 */
export function findNulCharacter(value: unknown, path: PropertyKey[] = []): ParamIssue | undefined {
  if (typeof value === 'string') {
    return value.includes('\u0000') ? { path: formatPath(path), message: NUL_PROBLEM } : undefined;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const issue = findNulCharacter(item, [...path, index]);
      if (issue !== undefined) return issue;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) {
        return { path: `${formatPath([...path, key])} (the key)`, message: NUL_PROBLEM };
      }
      const issue = findNulCharacter(item, [...path, key]);
      if (issue !== undefined) return issue;
    }
  }
  return undefined;
}
