import type { HistoryRecorder } from '../history/recorder.js';
import { replyFields } from '../history/reply-fields.js';
import type { Endpoint, Tenant } from './endpoints.js';

/**
 * A `fetch` for `@mcp-tasks/client` that writes what the client sends and gets into the history:
 * each request and its reply as the lean path records them, and for a `subscriptions/listen`
 * stream each `notifications/tasks` message as it passes to the client (the stream itself is
 * handed on untouched, so the client reads, ends and cancels it as usual).
 */
export function createRecordingFetch(
  recorder: HistoryRecorder,
  endpoint: Endpoint,
  tenant: Tenant,
): typeof fetch {
  const base = { replica: endpoint.replica, tenant: tenant.name };
  return async (input, init) => {
    // The client always sends its JSON-RPC body as a string.
    const body = JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as {
      method?: string;
      params?: { taskId?: unknown; notifications?: { taskIds?: unknown[] } };
    };
    const method = body.method ?? '?';
    const taskId =
      typeof body.params?.taskId === 'string'
        ? body.params.taskId
        : typeof body.params?.notifications?.taskIds?.[0] === 'string'
          ? body.params.notifications.taskIds[0]
          : undefined;
    const op = recorder.request({ ...base, method, ...(taskId === undefined ? {} : { taskId }) });
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      recorder.reply(op, {
        ...base,
        method,
        taskId,
        errorMessage: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    const streaming = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (method === 'subscriptions/listen' && streaming && response.body !== null) {
      const observed = observeSseData(response.body, (data) => {
        let message: { method?: string; params?: unknown };
        try {
          message = JSON.parse(data) as typeof message;
        } catch {
          return; // not JSON-RPC: the client will say so
        }
        if (message.method !== 'notifications/tasks') return;
        const fields = replyFields(200, JSON.stringify({ jsonrpc: '2.0', result: message.params }));
        if (fields.taskId === undefined || fields.status === undefined) return;
        recorder.notification(op, {
          ...base,
          taskId: fields.taskId,
          status: fields.status,
          ...(fields.inputKeys === undefined ? {} : { inputKeys: fields.inputKeys }),
          ...(fields.result === undefined ? {} : { result: fields.result }),
        });
      });
      return new Response(observed, { status: response.status, headers: response.headers });
    }
    const text = await response.text();
    const fields = replyFields(response.status, text, response.headers);
    recorder.reply(op, { ...base, method, ...fields, taskId: fields.taskId ?? taskId });
    return new Response(text, { status: response.status, headers: response.headers });
  };
}

/**
 * Passes an SSE body through unchanged and calls `onData` with each event's data as it goes by.
 * Cancelling the returned stream cancels the original (the connection closes as it would).
 */
function observeSseData(
  body: ReadableStream<Uint8Array>,
  onData: (data: string) => void,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(chunk);
        buffer += decoder.decode(chunk, { stream: true });
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          else if (line === '' && data.length > 0) {
            onData(data.join('\n'));
            data = [];
          }
        }
      },
    }),
  );
}
