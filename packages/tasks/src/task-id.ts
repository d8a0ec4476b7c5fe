import { randomBytes } from 'node:crypto';

const TASK_ID_PATTERN = /^tsk_[A-Za-z0-9_-]{22,}$/;

/** A task id carries 144 bits from the CSPRNG (R12: at least 128), base64url, prefixed `tsk_`. */
export function newTaskId(): string {
  return `tsk_${randomBytes(18).toString('base64url')}`;
}

/** A cheap shape check so malformed ids are refused before any query (they answer as unknown). */
export function isWellFormedTaskId(value: string): boolean {
  return TASK_ID_PATTERN.test(value) && value.length <= 64;
}
