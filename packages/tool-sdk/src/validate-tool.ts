import type { ExecutionMode, ToolDefinition } from './tool.js';

const MODES: readonly ExecutionMode[] = ['sync', 'task', 'task-optional'];
const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Problems with a tool definition that came from outside the type checker (a loaded module):
 * each one names the field, so a deployment that loads a broken pack fails at startup, clearly.
 */
export function toolDefinitionProblems(value: unknown): string[] {
  if (!isObject(value)) return ['is not an object'];
  const problems: string[] = [];
  const name = value.name;
  if (typeof name !== 'string' || !NAME.test(name))
    problems.push('name: must be 1-128 characters of A-Z a-z 0-9 _ . -');
  if (typeof value.description !== 'string') problems.push('description: must be a string');
  if (!isObject(value.inputSchema) || value.inputSchema.type !== 'object')
    problems.push('inputSchema: must be a JSON Schema object with type "object"');
  if (!isObject(value.arguments) || typeof value.arguments.safeParse !== 'function')
    problems.push('arguments: must be a zod schema');
  const mode = value.mode as ExecutionMode;
  if (!MODES.includes(mode)) problems.push(`mode: must be one of ${MODES.join(', ')}`);
  const version = value.version;
  if (version !== undefined && !(Number.isInteger(version) && (version as number) >= 1))
    problems.push('version: must be a positive integer');
  const task = value.task;
  if (mode === 'task' || mode === 'task-optional') {
    if (!isObject(task) || typeof task.start !== 'function' || typeof task.step !== 'function')
      problems.push(`task: mode ${mode} needs a task program with start and step`);
    else if (typeof task.initialStatusMessage !== 'string')
      problems.push('task.initialStatusMessage: must be a string');
  }
  if ((mode === 'sync' || mode === 'task-optional') && typeof value.runSync !== 'function')
    problems.push(`runSync: mode ${mode} needs a runSync function`);
  return problems;
}

/** Throws one error listing every problem, prefixed with where the definition came from. */
export function assertToolDefinition(value: unknown, origin: string): ToolDefinition {
  const problems = toolDefinitionProblems(value);
  if (problems.length === 0) return value as ToolDefinition;
  const name = isObject(value) && typeof value.name === 'string' ? ` ${value.name}` : '';
  throw new Error(`${origin}: tool${name} is invalid: ${problems.join('; ')}`);
}
