export {
  createTestDatabase,
  createTestRedis,
  postgresBaseUrl,
  redisBaseUrl,
  uniqueSuffix,
  type TestDatabase,
  type TestRedis,
} from './services.js';
export {
  freePort,
  launchProcess,
  entryToRun,
  nodeArguments,
  processesMarked,
  repoRoot,
  type LaunchOptions,
  type LaunchedProcess,
} from './processes.js';
export {
  appEntry,
  launchGateway,
  launchTopology,
  launchWorker,
  managedGateway,
  managedWorker,
  type AppBuild,
  type AppName,
  type GatewayHandle,
  type LaunchAppOptions,
  type LaunchWorkerOptions,
  type ManagedAppOptions,
  type ManagedWorkerOptions,
  type Topology,
  type TopologyOptions,
  type WorkerHandle,
} from './topology.js';
export {
  ManagedProcess,
  type ExitStatus,
  type LogLine,
  type LogSink,
  type ProcessRole,
  type ProcessSpec,
} from './managed-process.js';
export {
  FAST_WORKER_ENV,
  isTerminalTask,
  startToolStack,
  type JsonRecord,
  type RpcAnswer,
  type RpcError,
  type RpcExtras,
  type ToolStack,
  type ToolStackOptions,
} from './tool-stack.js';
export {
  startTcpProxy,
  type TcpProxy,
  type TcpProxyMode,
  type TcpProxyOptions,
} from './tcp-proxy.js';
export {
  replicaUnavailableReason,
  startReplicaPair,
  startReplicaSet,
  type ReplicaPair,
  type ReplicaSet,
} from './replica-pair.js';
export {
  PG_BIN,
  makePostgresDir,
  privatePostgresUnavailableReason,
  runAsPostgres,
  startPostgresServer,
  type PostgresServer,
  type PostgresServerOptions,
  type PostgresStopMode,
} from './postgres-server.js';
export {
  startFailoverCluster,
  type FailoverCluster,
  type FailoverClusterOptions,
  type FailoverEvidence,
} from './failover-cluster.js';
export {
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerClient,
  type AuthorizationServerOptions,
  type TokenRequest,
} from './authorization-server.js';
export { startOtlpReceiver, type OtlpReceiver } from './otlp/otlp-receiver.js';
export type { CollectedSpan } from './otlp/otlp-trace.js';
export {
  PGBOUNCER_BIN,
  pgBouncerUnavailableReason,
  skipUnlessEngine,
  startPgBouncer,
  startTransactionPooler,
  type PgBouncer,
  type TransactionPooler,
  type PgBouncerOptions,
  type PgBouncerPoolMode,
} from './pgbouncer.js';
export {
  ephemeralPortRange,
  redisClusterUnavailableReason,
  startRedisCluster,
  type RedisCluster,
  type RedisClusterOptions,
} from './redis-cluster.js';
