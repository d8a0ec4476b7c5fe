export {
  createDb,
  createSpreadDb,
  DEFAULT_IDLE_TIMEOUT_MS,
  type CreateDbOptions,
  type Database,
  type Db,
  type TaskRow,
  type TasksTable,
} from './db/database.js';
export { MIGRATIONS } from './migrations/index.js';
export { assertSchemaCompatible, migrateTo, migrateToLatest } from './db/migrate.js';
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
export { taskRowToTask } from './rows/task-row.js';
export { recordAttemptSpan, type ClaimTrace, type TraceContext } from './rows/trace-context.js';
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
} from './rows/task-repository.js';
export { createReplicaWaiter, type ReplicaWaiter } from './db/replica.js';
export {
  createNaturalBatcher,
  type BatchOutcome,
  type NaturalBatcherOptions,
} from './db/natural-batcher.js';
export { getTaskViewForPrincipal, type TaskViewKey } from './service/task-view.js';
export {
  DEFAULT_LISTEN_FLAG_TTL_MS,
  flagListenedTasks,
  flagListenedTasksOfOwners,
  type ListenFlagRequest,
} from './rows/listen-repository.js';
export {
  claimFairly,
  claimLease,
  claimLeases,
  isClaimable,
  releaseLease,
  renewLease,
  type Claim,
  type Fence,
  type ToolRecord,
} from './lease/lease.js';
export {
  createBatchedLeaseWrites,
  type BatchedLeaseWrites,
  type BatchedLeaseWritesOptions,
} from './lease/batched-lease-writes.js';
export {
  completeTask,
  failTask,
  markCancelled,
  recordAttemptFailure,
  requestInput,
  saveCheckpoint,
  saveCheckpoints,
  writeFinal,
  writeFinals,
  requestInputs,
  type CheckpointWrite,
  type InputPauseWrite,
  type FinalWrite,
} from './lease/fenced-task-writes.js';
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
} from './sweeper/sweeper-repository.js';
export {
  createOutbox,
  markWakeUpSent,
  type OrphanWakeUp,
  type Outbox,
  type OutboxOptions,
  type WakeUpQueue,
  type WakeUpReason,
} from './wake-up/outbox.js';
export {
  LEADERSHIP_APPLICATION_NAME,
  createLeadershipSession,
  tryAcquireLeadership,
  type Leadership,
  type LeadershipSession,
} from './sweeper/leadership.js';
export {
  readLastSweep,
  recordSweep,
  type LastSweep,
  type SweepRecord,
} from './sweeper/sweeper-state.js';
export {
  CHANGE_LISTENER_APPLICATION_NAME,
  TASK_CHANGES_CHANNEL,
  TASK_LEASE_CHANGES_CHANNEL,
  createTaskChangeListener,
  type TaskChangeListener,
  type TaskChangeListenerOptions,
  type TaskChangesChannel,
} from './db/change-listener.js';
export {
  DEFAULT_MAX_CREATE_WAIT_MS,
  DEFAULT_MAX_WAITING_CREATES,
  DEFAULT_WAKE_UP_LINGER_MS,
  createTaskService,
  type DatabaseCheck,
  type TaskService,
  type TaskServiceOptions,
  type CreateOptions,
  type ReadOptions,
} from './service/task-service.js';
export {
  createOrphanWaker,
  type OrphanSweep,
  type OrphanWaker,
  type OrphanWakerOptions,
} from './sweeper/orphan-waker.js';
export { recordToolMissing, recordToolVersion } from './lease/tool-record.js';
export { wakeUpGraceProblem, minimumWakeUpGraceMs } from './service/create-window.js';
export { describeConnectionFailure, maskPassword } from './db/connection-failure.js';
export { countTasksInFlight } from './rows/tenant-load.js';
export {
  describeReplicationDurability,
  readReplicationDurability,
  type ReplicationDurability,
} from './db/replication-durability.js';
export {
  infrastructureFailure,
  isTransientInfrastructureError,
  type InfrastructureFailure,
} from './db/infrastructure-failure.js';
export {
  beginStepTransaction,
  commitStepTransaction,
  queryInStepTransaction,
  rollbackStepTransaction,
  type BeginStepTransactionOptions,
  type StepQueryResult,
  type StepTransactionHandle,
} from './lease/step-transaction.js';
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
} from './db/database-settings.js';
export { describePoolerRefusal, statementTimeoutProblem } from './db/pooler-checks.js';
