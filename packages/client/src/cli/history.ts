import { ConnectionError, HttpError } from '../errors.js';

/** One event of a task's history, as the console's JSON API (GET /console/api/tasks/:id/history) sends it. */
export interface HistoryEvent {
  id: string;
  at: string;
  kind: string;
  actor: string | null;
  data: Record<string, unknown>;
}

/**
 * Where the console lives: MCP_CONSOLE_URL, else the MCP endpoint's origin with `/console` (every
 * gateway serves both).
 */
export function consoleBaseUrl(consoleUrl: string | undefined, mcpUrl: string | undefined): string {
  const base = consoleUrl ?? (mcpUrl === undefined ? undefined : new URL('/console', mcpUrl).href);
  if (base === undefined)
    throw new RangeError('set --console-url (MCP_CONSOLE_URL) or --url (MCP_URL)');
  return base.replace(/\/+$/, '');
}

/** Reads a task's history with a console operator token (MCP_CONSOLE_TOKEN, not an MCP token). */
export async function fetchHistory(
  base: string,
  token: string,
  taskId: string,
): Promise<HistoryEvent[]> {
  const url = `${base}/api/tasks/${encodeURIComponent(taskId)}/history`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  } catch (error) {
    throw new ConnectionError(`nothing answered at ${base}`, { cause: error });
  }
  const body = (await response.json().catch(() => ({}))) as {
    events?: HistoryEvent[];
    message?: string;
  };
  if (!response.ok || body.events === undefined)
    throw new HttpError(
      response.status,
      `history of ${taskId}: ${body.message ?? `HTTP ${response.status}`}`,
    );
  return body.events;
}

export function describeEvent(event: HistoryEvent): string {
  const details = Object.keys(event.data).length === 0 ? '' : ` ${JSON.stringify(event.data)}`;
  const actor = event.actor === null ? '' : ` by ${event.actor}`;
  return `${event.at} ${event.kind}${actor}${details}`;
}
