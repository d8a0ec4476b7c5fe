import {
  StaleLeaseError,
  beginStepTransaction,
  commitStepTransaction,
  isTransientInfrastructureError,
  queryInStepTransaction,
  rollbackStepTransaction,
  type Db,
  type Fence,
  type StepTransactionHandle,
} from '@mcp-tasks/store';
import type { StepContext, StepTransaction } from '@mcp-tasks/tools';

/**
 * The transaction one step may ask for (`ctx.transaction`), opened on first use and shared by
 * every later call in the step. The step loop writes the step's outcome on `handle` and commits;
 * any other end rolls it back. See docs/adr/0005-exactly-once-step-effects.md.
 */
export interface StepEffects {
  transaction: StepContext['transaction'];
  /** The open transaction, when the step asked for one and it did not fail. */
  handle(): StepTransactionHandle | undefined;
  /**
   * What rolled the transaction back during the step, if anything: the step fails with it,
   * whatever the step returned (its outcome would claim effects that were not written).
   */
  failure(): StepEffectsFailure | undefined;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/**
 * `ours`: the fence no longer held (`StaleLeaseError`) or Postgres failed under us; the attempt
 * ends as a lost lease or an outage, not as the task's error. `tool`: the tool's own work threw.
 */
export type StepEffectsFailure = { by: 'ours' | 'tool'; error: unknown };

export function openStepEffects(db: Db, fence: Fence, idleTimeoutMs: number): StepEffects {
  let handle: StepTransactionHandle | undefined;
  let opening: Promise<StepTransactionHandle> | undefined;
  let failure: StepEffectsFailure | undefined;
  // Calls of one step run one after another on the one connection.
  let queue: Promise<unknown> = Promise.resolve();

  const fail = async (error: unknown): Promise<never> => {
    const ours = error instanceof StaleLeaseError || isTransientInfrastructureError(error);
    failure ??= { by: ours ? 'ours' : 'tool', error };
    const open = handle;
    handle = undefined;
    if (open !== undefined) await rollbackStepTransaction(open);
    throw error;
  };

  const tx = (trx: StepTransactionHandle): StepTransaction => ({
    query: (text, values) => queryInStepTransaction(trx, text, values),
  });

  async function runWork<T>(work: (tx: StepTransaction) => Promise<T>): Promise<T> {
    if (failure !== undefined)
      throw new Error('this step’s transaction was rolled back; the step will be run again');
    opening ??= beginStepTransaction(db, fence, { idleTimeoutMs });
    let trx: StepTransactionHandle;
    try {
      trx = await opening;
    } catch (error) {
      return await fail(error);
    }
    handle ??= trx;
    try {
      return await work(tx(trx));
    } catch (error) {
      return await fail(error);
    }
  }

  return {
    transaction<T>(work: (tx: StepTransaction) => Promise<T>): Promise<T> {
      const next = queue.then(() => runWork(work));
      queue = next.catch(() => undefined);
      return next;
    },
    handle: () => handle,
    failure: () => failure,
    async commit() {
      const open = handle;
      handle = undefined;
      if (open === undefined) return;
      try {
        await commitStepTransaction(open);
      } catch (error) {
        // Unknown whether it committed (the answer may be what was lost): the next claim reads
        // whichever checkpoint stands. The rollback only frees the connection.
        await rollbackStepTransaction(open);
        throw error;
      }
    },
    async rollback() {
      const open = handle;
      handle = undefined;
      if (open !== undefined) await rollbackStepTransaction(open);
    },
  };
}
