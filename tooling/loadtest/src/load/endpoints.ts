import { setTimeout as sleep } from 'node:timers/promises';
import { buildRequest, DEFAULT_CAPABILITIES } from '@mcp-tasks/client';
import { PROTOCOL_VERSION } from '@mcp-tasks/protocol';
import type { HistoryRecorder } from '../history/recorder.js';
import { replyFields, type ReplyFields } from '../history/reply-fields.js';
import { activeTraceId } from './client-tracing.js';

/** One MCP endpoint the load hits: a gateway replica's own URL, or the proxy. */
export interface Endpoint {
  replica: string;
  url: string;
}

export interface Tenant {
  name: string;
  token: string;
}

export interface SentReply extends ReplyFields {
  pollIntervalMs?: number;
}

const FRAMING = { protocolVersion: PROTOCOL_VERSION, clientCapabilities: DEFAULT_CAPABILITIES };
const REQUEST_TIMEOUT_MS = 15_000;
const FINAL_READ_ATTEMPTS = 5;
const FINAL_READ_RETRY_MS = 1_000;
let nextId = 1;

/**
 * The lean hot path: one POST built by @mcp-tasks/client's request builder (the same wire
 * messages the client sends), with its request and reply written to the history.
 */
export async function sendRecorded(
  recorder: HistoryRecorder,
  endpoint: Endpoint,
  tenant: Tenant,
  method: string,
  params: Record<string, unknown>,
  extra: { probe?: boolean; boundMs?: number; inputKeys?: string[]; final?: boolean } = {},
): Promise<SentReply> {
  const taskId = typeof params.taskId === 'string' ? params.taskId : undefined;
  const traceId = method === 'tools/call' ? activeTraceId() : undefined;
  const op = extra.final
    ? undefined
    : recorder.request({
        replica: endpoint.replica,
        tenant: tenant.name,
        method,
        ...(taskId === undefined ? {} : { taskId }),
        ...(method === 'tools/call'
          ? {
              tool: params.name as string,
              arguments: params.arguments as Record<string, never>,
            }
          : {}),
        ...(extra.inputKeys ? { inputKeys: extra.inputKeys } : {}),
        ...(extra.boundMs === undefined ? {} : { boundMs: extra.boundMs }),
        ...(extra.probe ? { probe: true } : {}),
        ...(traceId === undefined ? {} : { traceId }),
      });
  const built = buildRequest(method, params, {
    id: nextId++,
    framing: FRAMING,
    token: tenant.token,
  });
  let fields: SentReply;
  // A final read is the checker's evidence that a task exists: one that got no answer at all
  // (a replica still restarting after the last chaos round) is sent again before it is recorded.
  for (let attempt = 1; ; attempt += 1) {
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: built.headers,
        body: JSON.stringify(built.body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      fields = replyFields(response.status, text, response.headers);
      const poll = /"pollIntervalMs":(\d+)/.exec(text);
      if (poll) fields.pollIntervalMs = Number(poll[1]);
    } catch (error) {
      fields = { errorMessage: error instanceof Error ? error.message : String(error) };
    }
    // A refusal to retry later (503/429 with Retry-After: the store still recovering) is no
    // answer about the task either.
    const unanswered =
      (fields.errorCode === undefined && fields.errorMessage !== undefined) ||
      fields.retryAfter !== undefined;
    if (!extra.final || !unanswered || attempt >= FINAL_READ_ATTEMPTS) break;
    await sleep(FINAL_READ_RETRY_MS);
  }
  const { pollIntervalMs: _poll, ...recorded } = fields;
  const base = { replica: endpoint.replica, tenant: tenant.name };
  if (op === undefined) recorder.final({ ...base, taskId: taskId!, ...recorded });
  else recorder.reply(op, { ...base, method, ...recorded, taskId: recorded.taskId ?? taskId });
  return fields;
}
