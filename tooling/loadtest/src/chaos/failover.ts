import type { ChaosPlan } from './plan.js';

/**
 * Primary failover, as a managed Postgres does it: the primary dies (pg_ctl stop -m immediate),
 * the streaming standby is promoted (pg_ctl promote), and the endpoint the stack writes through
 * moves to it; the old primary never comes back. Then a new standby is built from the new primary
 * (pg_basebackup) and made synchronous, so the next round can fail over again. Recorded:
 * `kill-primary` (before the kill: the outage starts there), `promoted` (the endpoint moved),
 * `standby-added`.
 */
export const failover: ChaosPlan = {
  name: 'failover',
  needs: ['failover-cluster'],
  // The replicas topology has a primary and replicas of its own; it is not the failover cluster.
  topologies: ['direct', 'pooler'],
  everyMs: 5_000,
  async round(ctx, record) {
    const cluster = ctx.cluster;
    if (cluster === undefined) throw new Error('failover needs the harness failover cluster');
    record('kill-primary', 'postgres', {
      primary: cluster.primary.name,
      pid: (await cluster.primary.pid()) ?? null,
      standby: cluster.standby?.name ?? null,
    });
    const promoted = await cluster.failover();
    record('promoted', 'postgres', { ...promoted });
    const added = await cluster.addStandby();
    record('standby-added', 'postgres', added);
  },
};
