import { createClient, type McpTasksClient } from '@mcp-tasks/client';
import {
  createTestRedis,
  freePort,
  launchProcess,
  replicaUnavailableReason,
  skipUnlessEngine,
  startReplicaSet,
  type LaunchedProcess,
  type ReplicaSet,
  type TestRedis,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 26, part 2: reads spread over replicas that lag differently. A primary and two real
 * streaming replicas, one replaying 1 s late (recovery_min_apply_delay), read through a
 * round-robin reader endpoint by one gateway and as a DATABASE_READ_URL list by the other. Every
 * create is followed at once by tasks/get on the other gateway, whose read may reach the late
 * replica: a handle the client holds must never be answered "not found".
 */
const skip = skipUnlessEngine('streaming replicas', replicaUnavailableReason());
const CAPS = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const CREATES = 1_000;
const LANES = 16;

describe.skipIf(skip)(
  'tasks/get behind a reader endpoint over replicas that lag differently',
  () => {
    let set: ReplicaSet;
    let redis: TestRedis;
    const gateways: LaunchedProcess[] = [];
    const clients: McpTasksClient[] = [];

    beforeAll(async () => {
      set = await startReplicaSet({
        replicas: [{}, { recovery_min_apply_delay: '1s' }],
      });
      redis = await createTestRedis('gw_reader_endpoint');
      const readUrls = [set.readerUrl(), set.replicaUrls().join(',')];
      for (const [index, readUrl] of readUrls.entries()) {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}`;
        gateways.push(
          await launchProcess({
            entry: 'apps/gateway/src/main.ts',
            env: {
              DATABASE_URL: set.primaryUrl(),
              DATABASE_READ_URL: readUrl,
              REDIS_URL: redis.url,
              REDIS_PREFIX: redis.prefix,
              MCP_AUTH: 'none',
              // The first one migrates; the second starts after it.
              MCP_MIGRATE_ON_START: index === 0 ? 'true' : 'false',
              TENANT_CREATE_RATE: '0',
              TENANT_MAX_IN_FLIGHT: '0',
              LOG_LEVEL: 'warn',
              PORT: String(port),
              HOST: '127.0.0.1',
            },
            readyUrl: `${url}/healthz`,
            readyTimeoutMs: 60_000,
          }),
        );
        clients.push(
          createClient({
            url: `${url}/mcp`,
            capabilities: CAPS,
            clientInfo: { name: 'reader-endpoint', version: '1.0.0' },
          }),
        );
      }
    }, 180_000);

    afterAll(async () => {
      await Promise.allSettled(gateways.map((gateway) => gateway.stop()));
      await redis?.deleteKeys();
      await set?.stop();
    });

    it(`answers ${CREATES} handles at once on the other gateway, none "not found"`, async () => {
      const wrong: unknown[] = [];
      let found = 0;
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < CREATES) {
          const index = next++;
          const creator = clients[index % 2]!;
          const reader = clients[(index + 1) % 2]!;
          const created = await creator.send('tools/call', {
            name: 'generate_report',
            arguments: { size: 'small' },
          });
          const taskId = created.message?.result?.taskId;
          if (typeof taskId !== 'string') {
            wrong.push({ create: created.message });
            continue;
          }
          const read = await reader.send('tasks/get', { taskId });
          if (read.message?.result?.taskId === taskId) found += 1;
          else wrong.push({ taskId, get: read.message });
        }
      };
      await Promise.all(Array.from({ length: LANES }, lane));
      // A wrong answer names its cause in the gateways' logs: show them with the failure.
      const logs = wrong.length === 0 ? '' : gateways.map((gateway) => gateway.output()).join('\n');
      expect({ wrong, logs }).toEqual({ wrong: [], logs: '' });
      expect(found).toBe(CREATES);
    }, 300_000);
  },
);
