import type { TaskOwner } from '@mcp-tasks/tasks';

/** Who is calling: every task is owned by, and only visible to, this pair (R12, R15). */
export type Identity = TaskOwner;

export interface Authenticator {
  /** Resolves the caller from the Authorization header, or throws a 401 HttpProtocolError. */
  authenticate(authorization: string | null): Promise<Identity>;
  /**
   * Rejects while the keys that verify tokens cannot be had (an identity provider unreachable):
   * /readyz reports it. Absent when nothing outside the process is needed.
   */
  ready?(): Promise<void>;
}

/** The token of `Authorization: Bearer <token>`, or undefined when absent or another scheme. */
export function bearerToken(authorization: string | null): string | undefined {
  if (authorization === null) return undefined;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
  return match?.[1];
}
