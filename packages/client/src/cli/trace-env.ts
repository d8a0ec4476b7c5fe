import { CliExit, ExitCode } from './exit-codes.js';

/** W3C Trace Context level 1: version 00, then trace id, parent id and flags in lowercase hex. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ALL_ZEROS = /^0+$/;
/** tracestate: list members of printable ASCII, at most 512 characters (W3C's limit). */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

const EXPECTED =
  'expected 00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>, lowercase, ids not all zeros (W3C Trace Context)';

/**
 * The trace context of the environment (`TRACEPARENT`, `TRACESTATE`: the env-carrier convention
 * of otel-cli and OpenTelemetry's environment-variable carriers), as `_meta` keys for every
 * request the CLI sends. Empty means unset; TRACESTATE without TRACEPARENT is dropped, as W3C
 * says of a tracestate with no traceparent. A malformed value stops the command before anything
 * is sent: a trace silently lost is worse than a clear error.
 */
export function traceContextFromEnv(
  env: Record<string, string | undefined>,
): Record<string, string> | undefined {
  const traceparent = env.TRACEPARENT?.trim() ?? '';
  const tracestate = env.TRACESTATE?.trim() ?? '';
  if (traceparent === '') return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null || ALL_ZEROS.test(match[1]!) || ALL_ZEROS.test(match[2]!)) {
    throw new CliExit(
      ExitCode.Usage,
      `TRACEPARENT=${JSON.stringify(traceparent)} is not a traceparent: ${EXPECTED}`,
    );
  }
  if (tracestate === '') return { traceparent };
  if (!TRACESTATE.test(tracestate)) {
    throw new CliExit(
      ExitCode.Usage,
      `TRACESTATE=${JSON.stringify(tracestate)} is not a tracestate: expected key=value pairs separated by commas, printable ASCII, at most 512 characters`,
    );
  }
  return { traceparent, tracestate };
}
