import fc from 'fast-check';
import { deepValue } from './json-text.js';

export type Path = readonly (string | number)[];
type Json = unknown;

/** Every path in `value` (the root too), objects' keys and arrays' indexes, breadth first. */
export function allPaths(value: Json): Path[] {
  const found: Path[] = [[]];
  const queue: { value: Json; path: Path }[] = [{ value, path: [] }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const { value: node, path } = next;
    if (node === null || typeof node !== 'object') continue;
    const entries: [string | number, Json][] = Array.isArray(node)
      ? node.map((item, index) => [index, item] as [number, Json])
      : Object.entries(node as Record<string, Json>);
    for (const [key, item] of entries) {
      const child = [...path, key];
      found.push(child);
      queue.push({ value: item, path: child });
    }
  }
  return found;
}

/** A copy of `value` with `path` replaced (`undefined`: removed); the root path replaces all. */
export function setAt(value: Json, path: Path, replacement: Json): Json {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy: Json[] = [...(value as Json[])];
    if (replacement === undefined && rest.length === 0) copy.splice(Number(head), 1);
    else copy[Number(head)] = setAt(copy[Number(head)], rest, replacement);
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy = { ...(value as Record<string, Json>) };
    if (replacement === undefined && rest.length === 0) delete copy[String(head)];
    else copy[String(head)] = setAt(copy[String(head)], rest, replacement);
    return copy;
  }
  return value;
}

/** Strings Postgres cannot store, and their neighbours that it can. */
export const awkwardString = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDBFFy',
  '\uDC00\uD800',
  '\uD83D\uDE00',
  '',
  ' ',
  '\u202E',
  '\uFFFF',
  '\\u0000',
  '%00',
  "'; DROP TABLE tasks; --",
  '../../etc/passwd',
  'tsk_AAAAAAAAAAAAAAAAAAAAAAAA',
);

/** Any JSON-ish value a field could be retyped to, small to huge. */
export const wildValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: awkwardString },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      2 ** 53 + 1,
      -(2 ** 63),
      1e308,
      [],
      {},
      [null],
      { '': null },
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 40, max: 20_000 }), fc.constantFrom('array', 'object'))
      .map(([depth, kind]) => deepValue(depth, kind)),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((size) => 'x'.repeat(size)),
  },
);

export type Mutation =
  | { op: 'retype'; pick: number; value: Json }
  | { op: 'delete'; pick: number }
  | { op: 'add'; pick: number; key: string; value: Json };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant('retype' as const), pick: fc.nat(), value: wildValue }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      pick: fc.nat(),
      key: fc.oneof(fc.string({ maxLength: 12 }), awkwardString),
      value: wildValue,
    }),
  },
);

/** Applies one mutation at the path `pick` chooses among `value`'s paths (any depth). */
export function applyMutation(value: Json, change: Mutation): Json {
  const paths = allPaths(value);
  const path = paths[change.pick % paths.length]!;
  switch (change.op) {
    case 'retype':
      return setAt(value, path, change.value);
    case 'delete':
      return path.length === 0 ? value : setAt(value, path, undefined);
    case 'add': {
      const target = path.reduce<Json>(
        (node, key) => (node as Record<string | number, Json>)[key],
        value,
      );
      if (target === null || typeof target !== 'object' || Array.isArray(target)) {
        return setAt(value, path, change.value);
      }
      return setAt(value, [...path, change.key], change.value);
    }
  }
}
