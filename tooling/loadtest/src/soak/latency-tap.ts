import type { HistoryRecorder } from '../history/recorder.js';

/** The requests whose latency a soak follows over time. */
export type TappedMethod = 'tools/call' | 'tasks/get';
const TAPPED = new Set<string>(['tools/call', 'tasks/get']);

/**
 * The recorder, passing every record through unchanged, that also reports the latency of each
 * `tools/call` and `tasks/get` it sees answered (request to reply, this process's clock).
 */
export function tapLatencies(
  recorder: HistoryRecorder,
  onLatency: (method: TappedMethod, ms: number, failed: boolean) => void,
): HistoryRecorder {
  const sent = new Map<number, { method: TappedMethod; at: number }>();
  return {
    ...recorder,
    request(fields) {
      const op = recorder.request(fields);
      if (TAPPED.has(fields.method) && fields.probe !== true)
        sent.set(op, { method: fields.method as TappedMethod, at: performance.now() });
      return op;
    },
    reply(op, fields) {
      recorder.reply(op, fields);
      const request = sent.get(op);
      if (request === undefined) return;
      sent.delete(op);
      onLatency(request.method, performance.now() - request.at, fields.errorMessage !== undefined);
    },
  };
}
