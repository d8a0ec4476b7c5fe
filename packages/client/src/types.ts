/** `tasks/get` / `notifications/tasks`: a DetailedTask (R14), as read from the wire. */
export interface TaskSnapshot {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, InputRequest>;
  result?: CallToolResult;
  error?: { code: number; message: string; data?: unknown };
  [key: string]: unknown;
}

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(snapshot: { status: string }): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(snapshot.status);
}

/** One entry of `inputRequests`: an elicitation (what this product sends) or another request. */
export interface InputRequest {
  method: string;
  params?: {
    mode?: string;
    message?: string;
    requestedSchema?: ElicitationSchema;
    [key: string]: unknown;
  };
}

export interface ElicitationSchema {
  type: 'object';
  properties: Record<string, ElicitationProperty>;
  required?: string[];
}

export interface ElicitationProperty {
  type?: 'string' | 'number' | 'integer' | 'boolean';
  title?: string;
  description?: string;
  enum?: (string | number)[];
  enumNames?: string[];
  oneOf?: { const: string; title?: string }[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  [key: string]: unknown;
}

/** The answer to an elicitation (`ElicitResult`): accept with content, decline, or cancel. */
export type ElicitResult =
  | { action: 'accept'; content: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' }
  | { action: 'cancel' };

/** `inputResponses`: one answer per input key. */
export type InputResponses = Record<string, ElicitResult | Record<string, unknown>>;

export interface CallToolResult {
  resultType?: 'complete';
  content?: { type: string; text?: string; [key: string]: unknown }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' };
  [key: string]: unknown;
}

/**
 * Asked for input. Receives only keys not yet answered or shown; answers any subset (an empty
 * object leaves the rest to someone else, e.g. another terminal running `answer`).
 */
export type InputHandler = (
  requests: Record<string, InputRequest>,
  context: { taskId?: string; signal?: AbortSignal },
) => Promise<InputResponses> | InputResponses;
