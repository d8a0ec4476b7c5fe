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
  repoRoot,
  type LaunchOptions,
  type LaunchedProcess,
} from './processes.js';
export {
  startTcpProxy,
  type TcpProxy,
  type TcpProxyMode,
  type TcpProxyOptions,
} from './tcp-proxy.js';
