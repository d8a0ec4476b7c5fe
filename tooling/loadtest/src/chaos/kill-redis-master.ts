import type { ChaosPlan } from './plan.js';

/**
 * A Redis Cluster master dies: the one serving the queue's slot (the stack's hash-tagged prefix),
 * since that is the only master the product's keys live on. Its replica is promoted after
 * cluster-node-timeout; wake-ups the dead master acknowledged but had not replicated are lost,
 * which the sweeper makes up for from Postgres. Then the killed node is started again and rejoins
 * as the new master's replica, so the next round can fail over again. Recorded: `kill-master`
 * (before the kill), `promoted` (the cluster serves every slot again), `rejoined`.
 */
export const killRedisMaster: ChaosPlan = {
  name: 'kill-redis-master',
  needs: ['redis-cluster'],
  everyMs: 5_000,
  async round(ctx, record) {
    const redis = ctx.redisCluster;
    if (redis === undefined) throw new Error('kill-redis-master needs the harness Redis Cluster');
    record('kill-master', 'redis', { slotOf: redis.queueKey });
    const { killed, promoted } = await redis.cluster.killMasterOf(redis.queueKey);
    record('promoted', 'redis', { killed, promoted });
    await redis.cluster.revive(killed);
    record('rejoined', 'redis', { node: killed });
  },
};
