/** What a script can tell apart from `$?`. Stable: documented in the package README. */
export const ExitCode = {
  Completed: 0,
  Failed: 1,
  Usage: 2,
  Cancelled: 3,
  InputRequired: 4,
  Connection: 5,
  ServerError: 6,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code of a task's terminal (or paused) status; a tool error counts as failed. */
export function exitCodeForStatus(snapshot: {
  status: string;
  result?: { isError?: boolean } | undefined;
}): ExitCode {
  switch (snapshot.status) {
    case 'completed':
      return snapshot.result?.isError === true ? ExitCode.Failed : ExitCode.Completed;
    case 'failed':
      return ExitCode.Failed;
    case 'cancelled':
      return ExitCode.Cancelled;
    case 'input_required':
      return ExitCode.InputRequired;
    default:
      return ExitCode.Completed;
  }
}

/** Ends the command with a code; thrown, so `finally` blocks (spinners, streams) still run. */
export class CliExit extends Error {
  constructor(
    readonly code: ExitCode,
    message = '',
  ) {
    super(message);
    this.name = 'CliExit';
  }
}
