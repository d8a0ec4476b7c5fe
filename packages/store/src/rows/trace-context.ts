import { CompiledQuery } from 'kysely';
import type { Db, TraceContext } from '../db/schema.js';
import { executePrepared } from '../db/prepared-statements.js';
import { RECORD_ATTEMPT } from '../sql/tasks.js';

export type { TraceContext } from '../db/schema.js';

/** What a claim reads for tracing: where the task's trace continues, and its last attempt span. */
export interface ClaimTrace {
  context: TraceContext;
  lastAttempt: string | null;
}

/**
 * Keeps the attempt span's `traceparent` on the row so that the attempt that takes over after
 * this one dies links it. Under the fence like every worker write, but a lost race is no error:
 * a later attempt already recorded its own. Only called while tracing is on.
 */
export async function recordAttemptSpan(
  db: Db,
  fence: { taskId: string; epoch: number },
  traceparent: string,
): Promise<void> {
  await executePrepared(
    db,
    'record_attempt_span',
    CompiledQuery.raw(RECORD_ATTEMPT, [fence.taskId, fence.epoch, traceparent]),
  );
}
