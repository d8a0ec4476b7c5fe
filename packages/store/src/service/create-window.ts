/**
 * The shortest sweeper grace (the workers' ENQUEUE_GRACE_MS) that is safe with the gateways'
 * visibility timeout (MCP_VISIBILITY_TIMEOUT_MS). A gateway may withdraw a task it created until
 * its replica wait timed out (one timeout after the INSERT) and the withdraw's retries ran out
 * (one more), plus a second for round trips; a sweeper waking the unclaimed task earlier could
 * run one whose client was told nothing will run.
 */
export function minimumWakeUpGraceMs(visibilityTimeoutMs: number): number {
  return 2 * visibilityTimeoutMs + 1_000;
}

/**
 * The one rule tying the two apps' settings, as the one-line startup problem both env parsers
 * report; undefined when the pair is safe.
 */
export function wakeUpGraceProblem(
  wakeUpGraceMs: number,
  visibilityTimeoutMs: number,
): string | undefined {
  const minimum = minimumWakeUpGraceMs(visibilityTimeoutMs);
  if (wakeUpGraceMs >= minimum) return undefined;
  return `ENQUEUE_GRACE_MS: ${wakeUpGraceMs} ms is shorter than 2 × MCP_VISIBILITY_TIMEOUT_MS + 1000 = ${minimum} ms, so the sweeper could run a task whose client was told nothing will run; raise it or lower MCP_VISIBILITY_TIMEOUT_MS (give gateways and workers the same values)`;
}
