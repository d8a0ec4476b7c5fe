export {
  DEFAULT_QUEUE_PREFIX,
  MAX_TASKS_PER_JOB,
  WAKE_UP_JOB_NAME,
  WAKE_UP_REASONS,
  WakeUpBatchSchema,
  WakeUpJobSchema,
  TASK_QUEUE_NAME,
  batchJobIdFor,
  jobIdFor,
  parseWakeUps,
  type WakeUpBatch,
  type WakeUpJob,
  type WakeUpReason,
} from './wake-up-job.js';
export {
  createTaskQueue,
  latestJobKey,
  type BatchedReason,
  type WakeUpOptions,
  type TaskQueue,
  type TaskQueueOptions,
} from './task-queue.js';
export {
  DEFAULT_STALL_CHECK_MS,
  createTaskConsumer,
  type ConsumerStall,
  type TaskConsumer,
  type TaskConsumerOptions,
} from './task-consumer.js';
export { probeRedis } from './redis-connection.js';
export {
  describeRedisEndpoint,
  effectivePrefix,
  hashTagOf,
  isClusterEndpoint,
  parseClusterNodes,
  redisEndpointFromEnv,
  type RedisEndpoint,
  type RedisNode,
} from './redis-endpoint.js';
export {
  CONSUMER_HEARTBEAT_INTERVAL_MS,
  consumerHeartbeatKey,
  createConsumerHeartbeatReader,
  startConsumerHeartbeat,
  type ConsumerHeartbeat,
  type ConsumerHeartbeatOptions,
  type ConsumerHeartbeatReader,
  type ConsumerSighting,
} from './consumer-heartbeat.js';
export {
  createTenantTokenBucket,
  tenantBucketKey,
  type TenantTokenBucket,
  type TokenGrant,
} from './tenant-token-bucket.js';
