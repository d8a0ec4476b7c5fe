import { InvalidArgumentError } from 'commander';
import type { ToolInfo } from '../types.js';

/** Collects repeated `--arg k=v` into pairs, in order. */
export function collectArg(value: string, previous: [string, string][] = []): [string, string][] {
  const index = value.indexOf('=');
  if (index <= 0) {
    throw new InvalidArgumentError(`expected key=value, got ${JSON.stringify(value)}`);
  }
  return [...previous, [value.slice(0, index), value.slice(index + 1)]];
}

/**
 * Tool arguments from `--args-json` and `--arg k=v`. A value is typed by the tool's input schema
 * (a `string` property stays a string, `007` included); without a schema, a value that reads as
 * JSON (numbers, booleans, objects) is taken as JSON, anything else as a string.
 */
export function buildToolArguments(
  pairs: [string, string][],
  argsJson: string | undefined,
  tool: ToolInfo | undefined,
): Record<string, unknown> {
  let args: Record<string, unknown> = {};
  if (argsJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(argsJson);
    } catch (error) {
      throw new InvalidArgumentError(`--args-json is not JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new InvalidArgumentError('--args-json must be a JSON object such as {"size":"small"}');
    }
    args = parsed as Record<string, unknown>;
  }
  const properties = (tool?.inputSchema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const [key, raw] of pairs) {
    args[key] = properties[key]?.type === 'string' ? raw : readLoose(raw);
  }
  return args;
}

function readLoose(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
