import type { MigrationProvider } from 'kysely';
import type { StoreMigration } from './online.js';
import { createTasks } from './0001-create-tasks.js';
import { countFailures } from './0002-count-failures.js';
import { orphanIndexes } from './0003-orphan-indexes.js';
import { toolVersion } from './0005-tool-version.js';
import { notifyListenedOnly } from './0007-notify-listened-only.js';
import { listenFlagsExpire } from './0008-listen-flags-expire.js';
import { fairQueue } from './0010-fair-queue.js';
import { inFlightByTenant } from './0011-in-flight-by-tenant.js';
import { stepsSaved } from './0012-steps-saved.js';
import { taskEvents } from './0017-task-events.js';
import { traceContext } from './0019-trace-context.js';
import { consoleHistoryAndSweeps } from './0020-console-history-and-sweeps.js';
import { stepStartsFolded } from './0021-step-starts-folded.js';
import { tasksUpdateInPlace } from './0022-tasks-update-in-place.js';
import { taskEventsLighterWrites } from './0024-task-events-lighter-writes.js';
import { leaseChangesChannel } from './0025-lease-changes-channel.js';

/**
 * Every migration this build knows, by name. Code, not files read at run time, so a bundled build
 * still has them. Forward-only: names sort in order of application and are never renamed; a new
 * change is a new entry (safe for a rolling deploy: additive first, removals a release later).
 * A released migration may be rewritten only to the same resulting schema (databases that ran it
 * never run it again): those marked `transactional: false` were, to apply without blocking writes
 * (issue 25).
 */
export const MIGRATIONS: Readonly<Record<string, StoreMigration>> = {
  '0001_create_tasks': createTasks,
  '0002_count_failures': countFailures,
  '0003_orphan_indexes': orphanIndexes,
  '0005_tool_version': toolVersion,
  '0007_notify_listened_only': notifyListenedOnly,
  '0008_listen_flags_expire': listenFlagsExpire,
  '0010_fair_queue': fairQueue,
  '0011_in_flight_by_tenant': inFlightByTenant,
  '0012_steps_saved': stepsSaved,
  '0017_task_events': taskEvents,
  '0019_trace_context': traceContext,
  '0020_console_history_and_sweeps': consoleHistoryAndSweeps,
  '0021_step_starts_folded': stepStartsFolded,
  '0022_tasks_update_in_place': tasksUpdateInPlace,
  '0024_task_events_lighter_writes': taskEventsLighterWrites,
  '0025_lease_changes_channel': leaseChangesChannel,
};

export { isTransactional, type StoreMigration } from './online.js';

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({ ...MIGRATIONS }),
};
