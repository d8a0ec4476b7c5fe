// One-line startup failures of the gateway's own listener; the URL ones are shared with the
// worker (`describeConnectionFailure` in @mcp-tasks/store).

/**
 * A start-up failure the operator can act on: `message` is printed as one `gateway: …` line and
 * the process exits 1. `logged`: it already went to the log (fatal), nothing more is printed.
 */
export class StartupError extends Error {
  override name = 'StartupError';
  constructor(
    message: string,
    readonly logged = false,
  ) {
    super(message);
  }
}

/** The server could not listen on PORT/HOST for a reason the operator can fix, as one line. */
export function describeListenFailure(
  error: unknown,
  listen: { port: number; host: string },
): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE')
    return (
      `PORT=${listen.port}: port ${listen.port} on ${listen.host} is already in use (another ` +
      'gateway or program on this host?). Stop it, or set PORT to a free port.'
    );
  if (code === 'EACCES')
    return (
      `PORT=${listen.port}: not permitted to listen on port ${listen.port} (ports below 1024 need ` +
      'privileges). Set PORT to a port above 1023.'
    );
  if (code === 'EADDRNOTAVAIL')
    return `HOST=${listen.host}: no such address on this host. Set HOST to one of its addresses, or 0.0.0.0.`;
  return undefined;
}
