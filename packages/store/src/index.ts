export {
  createDb,
  createSpreadDb,
  DEFAULT_IDLE_TIMEOUT_MS,
  type CreateDbOptions,
  type Database,
  type Db,
  type TaskRow,
  type TasksTable,
} from './database.js';
export { MIGRATIONS } from './migrations/index.js';
export { assertSchemaCompatible, migrateToLatest } from './migrate.js';
export {
  CreateOverloadedError,
  ReplicaLagError,
  StoreUnavailableError,
  type CreateOverload,
  SchemaMissingError,
  SchemaTooNewError,
  StaleLeaseError,
  TaskIdConflictError,
} from './errors.js';
export { taskRowToTask } from './task-row.js';
export { recordAttemptSpan, type ClaimTrace, type TraceContext } from './trace-context.js';
export {
  CANCELLED_BY_REQUEST,
  RESUMED_MESSAGE,
  UnstorableArgumentsError,
  WITHDRAWN_MESSAGE,
  createTask,
  createTasks,
  getTask,
  getTaskForPrincipal,
  getTasksForPrincipal,
  recordInputResponses,
  requestCancel,
  withdrawTasks,
  type CreatedTask,
  type NewTask,
} from './task-repository.js';
export { createReplicaWaiter, type ReplicaWaiter } from './replica.js';
export {
  createNaturalBatcher,
  type BatchOutcome,
  type NaturalBatcherOptions,
} from './natural-batcher.js';
export { getTaskViewForPrincipal } from './task-view.js';
export { DEFAULT_LISTEN_FLAG_TTL_MS, flagListenedTasks } from './listen-repository.js';
export {
  claimFairly,
  claimLease,
  claimLeases,
  releaseLease,
  renewLease,
  type Claim,
  type Fence,
  type ToolRecord,
} from './lease.js';
export {
  createBatchedLeaseWrites,
  type BatchedLeaseWrites,
  type BatchedLeaseWritesOptions,
} from './batched-lease-writes.js';
export {
  completeTask,
  failTask,
  markCancelled,
  recordAttemptFailure,
  requestInput,
  saveCheckpoint,
  writeFinal,
  writeFinals,
  type FinalWrite,
} from './fenced-task-writes.js';
export {
  TASK_EXPIRED_ERROR,
  TASK_EXPIRED_MESSAGE,
  DEFAULT_SWEEP_BATCH,
  databaseNow,
  deleteExpiredTaskBatch,
  deleteExpiredTasks,
  expireTaskBatch,
  expireTasks,
  type SweepBatch,
  findOrphans,
} from './sweeper-repository.js';
export {
  createOutbox,
  markEnqueued,
  type OrphanWakeUp,
  type Outbox,
  type OutboxOptions,
  type TaskDispatcher,
  type WakeReason,
} from './outbox.js';
export {
  LEADERSHIP_APPLICATION_NAME,
  createLeadershipSession,
  tryAcquireLeadership,
  type Leadership,
  type LeadershipSession,
} from './leadership.js';
export { readLastSweep, recordSweep, type LastSweep, type SweepRecord } from './sweeper-state.js';
export {
  CHANGE_LISTENER_APPLICATION_NAME,
  TASK_CHANGES_CHANNEL,
  createTaskChangeListener,
  type TaskChangeListener,
  type TaskChangeListenerOptions,
} from './change-listener.js';
export {
  DEFAULT_MAX_CREATE_WAIT_MS,
  DEFAULT_MAX_WAITING_CREATES,
  createTaskService,
  type DatabaseCheck,
  type RedispatchResult,
  type TaskService,
  type TaskServiceOptions,
  type CreateOptions,
  type ReadOptions,
} from './task-service.js';
export { recordToolMissing, recordToolVersion } from './tool-record.js';
export { enqueueGraceProblem, minimumEnqueueGraceMs } from './create-window.js';
export { describeConnectionFailure, maskPassword } from './connection-failure.js';
export { countTasksInFlight } from './tenant-load.js';
export {
  describeReplicationDurability,
  readReplicationDurability,
  type ReplicationDurability,
} from './replication-durability.js';
export {
  infrastructureFailure,
  isTransientInfrastructureError,
  type InfrastructureFailure,
} from './infrastructure-failure.js';
export {
  beginStepTransaction,
  commitStepTransaction,
  queryInStepTransaction,
  rollbackStepTransaction,
  type BeginStepTransactionOptions,
  type StepQueryResult,
  type StepTransactionHandle,
} from './step-transaction.js';
export { createConsoleService, type ConsoleService } from './console/console-service.js';
export {
  MAX_PAGE_SIZE,
  type OperatorScope,
  type PageCursor,
  type TaskFilter,
  type TaskListPage,
  type TaskListRow,
  SEARCH_SCAN_ROWS,
} from './console/console-queries.js';
export { MAX_BULK_CANCEL, type CancelTarget } from './console/console-actions.js';
export {
  type StoreHealth,
  type HeldByWorker,
  type Latency,
  type Throughput,
} from './console/console-health.js';
export { MAX_HISTORY_EVENTS, type TaskEvent, type EventMark } from './console/task-events.js';
export {
  parseDatabaseSettings,
  type DatabaseSettings,
  type DatabaseSettingsResult,
  type PoolerMode,
} from './database-settings.js';
export { describePoolerRefusal, statementTimeoutProblem } from './pooler-checks.js';
