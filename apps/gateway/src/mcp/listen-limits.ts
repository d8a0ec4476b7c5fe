import { ErrorCode } from '@mcp-tasks/protocol';
import { DEFAULT_LISTEN_FLAG_TTL_MS } from '@mcp-tasks/store';
import pLimit from 'p-limit';
import { HttpProtocolError } from '../errors.js';

/** The bounds on subscriptions/listen, per replica (env: MCP_LISTEN_*). */
export interface ListenLimits {
  /** Open streams on this replica. */
  maxStreams: number;
  /** Open streams per (tenant, principal) on this replica. */
  maxStreamsPerPrincipal: number;
  /** taskIds per listen request. */
  maxTaskIds: number;
  /** Bytes a stream may have queued for a client that is not reading before it is dropped. */
  maxBufferedBytes: number;
  /**
   * Listen statements (flags, snapshot loads) running at once on this replica; its streams share
   * them (listen-statements.ts), so at most one of each kind is ever in flight.
   */
  loadConcurrency: number;
  /**
   * How long a stream's listen flag on a task lasts (its changes go on the NOTIFY path); an open
   * stream renews it every third of this, so it lapses only once no stream has listened as long.
   */
  flagTtlMs: number;
}

export const DEFAULT_LISTEN_LIMITS: ListenLimits = {
  maxStreams: 1000,
  maxStreamsPerPrincipal: 20,
  maxTaskIds: 100,
  maxBufferedBytes: 1024 * 1024,
  loadConcurrency: 4,
  flagTtlMs: DEFAULT_LISTEN_FLAG_TTL_MS,
};

/** Admission of listen streams: one slot per open stream, released when it closes. */
export interface StreamSlots {
  /** Takes a slot for this caller or throws the right refusal; returns the release. */
  take(caller: string): () => void;
}

export function createStreamSlots(limits: ListenLimits): StreamSlots {
  const perCaller = new Map<string, number>();
  let total = 0;
  return {
    take(caller) {
      const mine = perCaller.get(caller) ?? 0;
      if (mine >= limits.maxStreamsPerPrincipal) {
        throw new HttpProtocolError(429, {
          code: ErrorCode.InvalidRequest,
          message: `Too many open subscriptions/listen streams for this caller: at most ${limits.maxStreamsPerPrincipal} per principal on a replica (MCP_LISTEN_STREAMS_PER_PRINCIPAL); close one, or name several taskIds in one listen`,
          data: { limit: limits.maxStreamsPerPrincipal },
          headers: { 'Retry-After': '5' },
        });
      }
      if (total >= limits.maxStreams) {
        throw new HttpProtocolError(503, {
          code: ErrorCode.InternalError,
          message: `This replica has its maximum of ${limits.maxStreams} open subscriptions/listen streams (MCP_LISTEN_MAX_STREAMS); retry (another replica may have room)`,
          data: { limit: limits.maxStreams },
          headers: { 'Retry-After': '5' },
        });
      }
      perCaller.set(caller, mine + 1);
      total += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (perCaller.get(caller) ?? 1) - 1;
        if (left === 0) perCaller.delete(caller);
        else perCaller.set(caller, left);
      };
    },
  };
}

/**
 * Listen loads share the primary's pool with task creation: they go through one bounded queue
 * per replica, so a burst of listens or a LISTEN reconnect (every stream resyncs at once) cannot
 * take every connection. The shared listen statements queue at most one batch of each kind, so
 * the queue is bounded too.
 */
export type LoadQueue = <T>(load: () => Promise<T>) => Promise<T>;

export function createLoadQueue(concurrency: number): LoadQueue {
  const limit = pLimit(concurrency);
  return (load) => limit(load);
}
