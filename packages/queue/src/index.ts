export {
  DEFAULT_QUEUE_PREFIX,
  RUN_TASK_JOB_NAME,
  RUN_TASK_REASONS,
  RunTaskJobSchema,
  TASK_QUEUE_NAME,
  jobIdFor,
  type RunTaskJob,
  type RunTaskReason,
} from './wake-up-job.js';
export {
  createTaskQueue,
  latestJobKey,
  type EnqueueOptions,
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
