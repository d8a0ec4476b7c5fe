import { randomUUID } from 'node:crypto';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Reuses a proxy's X-Request-Id when it is safe to log, so one id follows a request end to end. */
export function requestIdFrom(header: string | null): string {
  return header !== null && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}
