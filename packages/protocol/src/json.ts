import { z } from 'zod';

// The wire's copy of the JSON types; `JsonValue` is exported by @mcp-tasks/tasks only (this package
// may not import it). JsonObject stays exported: it names JsonObjectSchema's type.
type JsonPrimitive = string | number | boolean | null;
type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An object as JSON.parse makes it, which every zod object and record schema accepts as such:
 * the hand-written fast paths that skip a schema on the hot path check with this.
 */
export function isJsonRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
  );
}

/**
 * `{ ...value }` for a copy that is about to take more keys: on V8, adding a key to a spread copy
 * is far dearer than to an Object.assign copy (a spread copy's hidden class is made to fit). A JSON
 * `"__proto__"` key is an own property that Object.assign would turn into a prototype, so such
 * an object is still spread.
 */
export function copyForExtension<T extends object>(value: T): T {
  return Object.hasOwn(value, '__proto__') ? { ...value } : Object.assign({}, value);
}

export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
);

export const JsonObjectSchema: z.ZodType<JsonObject> = z.record(z.string(), JsonValueSchema);

/** Describes a value for error messages without echoing it (it may be large or sensitive). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
