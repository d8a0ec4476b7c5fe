/** The base protocol revision this server speaks (stateless, per-request `_meta`). */
export const PROTOCOL_VERSION = '2026-07-28';

/** Every version `server/discover` advertises and `_meta` may name; anything else is -32022 (R3). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [PROTOCOL_VERSION];

export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** Reserved `_meta` keys (BASIC §_meta). */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** Legacy key the inlined task result must never carry (CONF tasks-no-related-task-meta-on-inlined-result). */
export const META_RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Methods this product answers. */
export const Method = {
  ServerDiscover: 'server/discover',
  ToolsList: 'tools/list',
  ToolsCall: 'tools/call',
  TasksGet: 'tasks/get',
  TasksUpdate: 'tasks/update',
  TasksCancel: 'tasks/cancel',
  SubscriptionsListen: 'subscriptions/listen',
} as const;
export type Method = (typeof Method)[keyof typeof Method];

export const Notification = {
  Cancelled: 'notifications/cancelled',
  Initialized: 'notifications/initialized',
  SubscriptionsAcknowledged: 'notifications/subscriptions/acknowledged',
  Tasks: 'notifications/tasks',
} as const;

/** The task methods that require the extension on the very request (R4). */
export const TASK_METHODS: readonly string[] = [
  Method.TasksGet,
  Method.TasksUpdate,
  Method.TasksCancel,
];

/**
 * Requests removed by 2026-07-28 or by the Tasks extension: answered -32601 like any unknown
 * method (R5), listed so the gateway can say "removed" rather than "unknown" in the message.
 */
export const REMOVED_METHODS: readonly string[] = [
  'tasks/status',
  'tasks/result',
  'tasks/list',
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
];

export const ResultType = {
  Complete: 'complete',
  Task: 'task',
  InputRequired: 'input_required',
} as const;
export type ResultType = (typeof ResultType)[keyof typeof ResultType];
