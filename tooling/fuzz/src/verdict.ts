import type { Outcome } from './send.js';

/**
 * What must never be in an answer: a stack trace, a source location, SQL or a driver's words,
 * a JavaScript error name — the internals a 500 used to leak, or a message built from them.
 */
const INTERNALS: readonly [string, RegExp][] = [
  ['stack frame', /\n\s+at [^\n]+\(/],
  ['source location', /\.(?:ts|js|mjs|cjs):\d+:\d+/],
  ['node_modules path', /node_modules/],
  ['SQL', /\b(?:SELECT .+ FROM|INSERT INTO|UPDATE tasks SET|DELETE FROM)\b/],
  [
    'Postgres error',
    /syntax error at or near|violates \w+ constraint|relation "\w+"|invalid input syntax for/,
  ],
  ['driver error', /ECONNREFUSED|ETIMEDOUT|Connection terminated|Query read timeout/],
  [
    'JavaScript error',
    /Maximum call stack|\b(?:TypeError|RangeError|ReferenceError|SyntaxError): /,
  ],
];

export type Violation =
  | { kind: 'server_error'; status: number; body: string }
  | { kind: 'reset'; error: string }
  | { kind: 'hang'; afterMs: number }
  | { kind: 'internals'; what: string; body: string };

/** The answers the issue forbids: ≥ 500, a reset, a hang, a body with internals. */
export function judge(outcome: Outcome): Violation | undefined {
  if (outcome.kind === 'reset') return { kind: 'reset', error: outcome.error };
  if (outcome.kind === 'hang') return { kind: 'hang', afterMs: outcome.afterMs };
  const body = outcome.body.slice(0, 100_000);
  if (outcome.status >= 500)
    return { kind: 'server_error', status: outcome.status, body: body.slice(0, 500) };
  for (const [what, pattern] of INTERNALS) {
    if (pattern.test(body)) return { kind: 'internals', what, body: body.slice(0, 500) };
  }
  return undefined;
}
