import type { Implementation, RequestId, RequestMeta } from '@mcp-tasks/protocol';
import type { TaskService } from '@mcp-tasks/store';
import type { ToolCatalogue } from '@mcp-tasks/tools';
import type { Level, Logger } from 'pino';
import type { Identity } from '../auth/index.js';
import type { GatewayMetrics } from '../metrics.js';
import type { RequestStateCodec } from '../mrtr/request-state.js';
import type { TaskChangeFeed } from '../task-feed.js';
import type { ListenLimits, StreamSlots } from './listen-limits.js';
import type { ListenStatements } from './listen-statements.js';
import type { PollLimits } from './poll-rate-limit.js';
import type { TenantAdmission } from '../quotas/tenant-admission.js';

/** What the method handlers need, built once per gateway. */
export interface McpServices {
  /**
   * Every read and write of tasks: tasks/get reads the replica when one is configured (creation
   * waits until it has the row); tasks/update's check and listen snapshots read the primary,
   * right after the change they were told about.
   */
  taskService: TaskService;
  catalogue: ToolCatalogue;
  requestState: RequestStateCodec;
  changes: TaskChangeFeed;
  metrics: GatewayMetrics;
  serverInfo: Implementation;
  pollLimits: PollLimits | undefined;
  /** The per-tenant in-flight cap and create rate, asked before a task is created. */
  admission: TenantAdmission;
  /**
   * subscriptions/listen bounds, stream admission and the statements every stream of the replica
   * shares (through the bounded load queue).
   */
  listen: { limits: ListenLimits; slots: StreamSlots; statements: ListenStatements };
  /** OpenTelemetry is on (docs/tracing.md): requests get spans, creates keep their context. */
  tracing: boolean;
  /** Aborted when the process starts shutting down: listen streams end gracefully. */
  shutdownSignal: AbortSignal;
  settings: {
    taskTtlMs: number;
    taskPollIntervalMs: number;
    sseKeepAliveMs: number;
    /** Cache hint for server/discover and tools/list. */
    listTtlMs: number;
  };
}

/** One validated request: the envelope, its `_meta` and the caller, all decided before routing. */
export interface RequestContext {
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
  meta: RequestMeta;
  /** This request declared extensions["io.modelcontextprotocol/tasks"] (R4). */
  tasksDeclared: boolean;
  identity: Identity;
  log: Logger;
  /** Whether `log` would write a line at `level`; asking makes no logger (a create at warn). */
  logs(level: Level): boolean;
  /** Aborted when the client goes away or the request times out (listen: only the former). */
  signal: AbortSignal;
  /**
   * Call before work that must not be cut off (task creation): from here on the request timeout
   * no longer applies. Throws if the request already timed out or the client left.
   */
  disarmDeadline(): void;
  /** Throws if the request already timed out or the client left (queued work: drop it unsent). */
  checkDeadline(): void;
}

export type HandlerOutcome =
  { kind: 'result'; result: Record<string, unknown> } | { kind: 'stream'; response: Response };

export type MethodHandler = (ctx: RequestContext, services: McpServices) => Promise<HandlerOutcome>;

export const result = (value: Record<string, unknown>): HandlerOutcome => ({
  kind: 'result',
  result: value,
});
