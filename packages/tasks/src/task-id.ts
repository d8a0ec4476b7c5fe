import { randomFillSync } from 'node:crypto';

const TASK_ID_PATTERN = /^tsk_[A-Za-z0-9_-]{22,}$/;

const ID_BYTES = 18;
/**
 * CSPRNG bytes for 256 ids, drawn at once and each byte used once (as Node's randomUUID caches
 * its entropy): a draw is a system call, too dear to make per id on the create path.
 */
const entropy = Buffer.alloc(ID_BYTES * 256);
let used = entropy.length;

/** A task id carries 144 bits from the CSPRNG (R12: at least 128), base64url, prefixed `tsk_`. */
export function newTaskId(): string {
  if (used === entropy.length) {
    randomFillSync(entropy);
    used = 0;
  }
  const id = entropy.toString('base64url', used, used + ID_BYTES);
  used += ID_BYTES;
  return `tsk_${id}`;
}

/** A cheap shape check so malformed ids are refused before any query (they answer as unknown). */
export function isWellFormedTaskId(value: string): boolean {
  return TASK_ID_PATTERN.test(value) && value.length <= 64;
}
