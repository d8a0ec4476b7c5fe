import { connect } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ephemeralPortRange,
  redisClusterUnavailableReason,
  startRedisCluster,
  type RedisCluster,
} from './redis-cluster.js';

const unavailable = redisClusterUnavailableReason();
if (unavailable !== null && process.env.CI)
  throw new Error(`Redis Cluster tests cannot run in CI: ${unavailable}`);

let cluster: RedisCluster;

describe.skipIf(unavailable !== null)(`the harness Redis Cluster ${unavailable ?? ''}`, () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('puts every node and bus port below the ephemeral range, where no connect() takes them', () => {
    const { low } = ephemeralPortRange();
    expect(cluster.nodes).toHaveLength(6);
    for (const node of cluster.nodes) {
      const port = Number(node.split(':')[1]);
      expect(port).toBeGreaterThanOrEqual(1_024);
      expect(port + 10_000).toBeLessThan(low);
    }
  });

  it('starts a killed master again on its own port, as a replica of the promoted one', async () => {
    // Outgoing connections while the master is down, as every client reconnecting makes.
    const before = new Set(await cluster.masters());
    const { killed, promoted } = await cluster.killMasterOf('{mcp-tasks}');
    const sockets = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const socket = connect(Number(cluster.nodes.find((n) => n !== killed)!.split(':')[1]));
        await once(socket, 'connect');
        return socket;
      }),
    );
    try {
      await cluster.revive(killed);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    expect(before.has(killed)).toBe(true);
    expect(promoted).not.toBe(killed);
    const masters = await cluster.masters();
    expect(masters).toContain(promoted);
    expect(masters).not.toContain(killed);
  }, 60_000);
});
