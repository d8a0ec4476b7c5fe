export { withRetry } from './backoff.js';
export { createClient } from './client.js';
export type {
  CallOptions,
  CallOutcome,
  ClientOptions,
  McpTasksClient,
  RawReply,
} from './client.js';
export { TaskHandle, type SubscribeOptions, type WaitOptions } from './task-handle.js';
export { MemoryHandleStore, type HandleStore, type StoredTask } from './handle-store.js';
export {
  ConnectionError,
  HttpError,
  InputRequiredError,
  McpError,
  isRetryable,
  parseRetryAfter,
} from './errors.js';
export { DEFAULT_BACKOFF, pollDelay, retryDelay, type BackoffPolicy } from './backoff.js';
export { buildRequest, DEFAULT_CAPABILITIES, type BuiltRequest, type Framing } from './wire.js';
export { DEFAULT_STREAM_IDLE_TIMEOUT_MS, readSseMessages, type SseReadOptions } from './sse.js';
export * from './types.js';
export type { TokenSource } from './client.js';
export {
  OAuthError,
  clientCredentials,
  discoverAuthorization,
  requestClientCredentialsToken,
  type AccessToken,
  type AuthorizationInfo,
  type ClientCredentialsOptions,
} from './oauth.js';
