/**
 * Values a fuzz case puts in a message that JSON.stringify cannot write: arrays or objects nested
 * thousands deep (its recursion overflows past ~4,500). A case holds a marker string in their
 * place, and `toJsonText` writes each marker as the nested text itself.
 */
export type DeepKind = 'array' | 'object';

const MARKER = '\u0001deep';

/** A marker for a value `depth` levels deep, of arrays or of single-key objects. */
export function deepValue(depth: number, kind: DeepKind): string {
  return `${MARKER}:${depth}:${kind}`;
}

/** JSON.stringify writes U+0001 as `\u0001`: what a marker looks like in the text. */
const MARKER_IN_TEXT = /"\\u0001deep:(\d+):(array|object)"/g;

function nestedText(depth: number, kind: DeepKind): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}0${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`;
}

/** The message as JSON text, each deep marker written out. */
export function toJsonText(message: unknown): string {
  return JSON.stringify(message).replace(MARKER_IN_TEXT, (_, depth: string, kind: DeepKind) =>
    nestedText(Number(depth), kind),
  );
}
