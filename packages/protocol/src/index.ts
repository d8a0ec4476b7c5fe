// The package's public API: exactly what the apps and other packages import. Names used only
// inside this package (the envelope and wire schemas its builders compose, the `_meta` keys) stay
// exported from their modules for the package's own tests, not from here.
export { PROTOCOL_VERSION, TASKS_EXTENSION_ID, Method, TASK_METHODS } from './constants.js';
export { ErrorCode, ProtocolError } from './errors.js';
// JsonObject names the type of JsonObjectSchema, so code that extends the schema can be emitted.
export { JsonObjectSchema, type JsonObject } from './json.js';
export { parseJsonRpcMessage, jsonRpcResult, jsonRpcError, type RequestId } from './jsonrpc.js';
export {
  missingCapabilityError,
  declaresTasksExtension,
  requireTasksExtension,
  assertTasksExtension,
} from './capabilities.js';
export {
  validateRequestMeta,
  parseRequestMeta,
  buildRequestMeta,
  type Implementation,
  type RequestMeta,
} from './meta.js';
export {
  MAX_PARAMS_DEPTH,
  describeIssues,
  findTooDeep,
  findUnstorableText,
  invalidParamsError,
  parseParams,
  tooDeepParamsError,
} from './params.js';
export {
  buildRoutingHeaders,
  checkRoutingHeaders,
  assertRoutingHeaders,
} from './routing-headers.js';
export { withServerInfo, buildEmptyResult } from './results.js';
export { buildDiscoverResult, DiscoverParamsSchema } from './discover.js';
export { buildInputRequiredResult } from './mrtr.js';
export {
  buildListToolsResult,
  buildCallToolResult,
  ListToolsParamsSchema,
  CallToolParamsSchema,
  type ToolDescriptor,
} from './tools.js';
export {
  buildGetTaskResult,
  buildCreateTaskResult,
  buildTaskStatusNotification,
  GetTaskParamsSchema,
  parseTaskIdParams,
  UpdateTaskParamsSchema,
  CancelTaskParamsSchema,
} from './tasks.js';
export {
  listenRequiresTasksExtension,
  buildSubscriptionsAcknowledged,
  buildSubscriptionEnd,
  ListenParamsSchema,
} from './subscriptions.js';
export { httpStatusForErrorCode } from './http-status.js';
export { methodNotFoundError } from './method-errors.js';
export { checkInputResponses, inputResponsesError } from './input-response-check.js';
