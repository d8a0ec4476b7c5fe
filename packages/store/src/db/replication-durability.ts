import type { Db } from './database.js';
import { replicationDurabilityStatement } from '../sql/infrastructure.js';

/**
 * Whether the primary's commits wait for a synchronous standby, from the two settings that decide
 * it (docs/failover.md). Only the settings: they are readable by any role, while the standbys'
 * live `sync_state` is not.
 */
export interface ReplicationDurability {
  synchronousCommit: string;
  synchronousStandbyNames: string;
  /** A commit is acknowledged only once a standby has it: a failover loses no acknowledged write. */
  waitsForStandby: boolean;
}

const WAITING_LEVELS = new Set(['on', 'remote_write', 'remote_apply']);

export async function readReplicationDurability(db: Db): Promise<ReplicationDurability> {
  const { rows } = await replicationDurabilityStatement().execute(db);
  const { commit = 'on', standbys = '' } = rows[0] ?? {};
  return {
    synchronousCommit: commit,
    synchronousStandbyNames: standbys,
    waitsForStandby: standbys.trim() !== '' && WAITING_LEVELS.has(commit),
  };
}

/** The start-up log line about it: what a failover can lose with these settings. */
export function describeReplicationDurability(durability: ReplicationDurability): string {
  return durability.waitsForStandby
    ? 'commits wait for a synchronous standby: a failover to it loses no acknowledged write'
    : 'commits do not wait for a standby (synchronous_standby_names empty, or synchronous_commit local/off): unless the database replicates synchronously below Postgres, a failover may lose the last acknowledged writes (docs/failover.md)';
}
