import { z } from 'zod';
import { TASKS_EXTENSION_ID } from './constants.js';
import { ErrorCode, ProtocolError } from './errors.js';
import { failed, passed, throwIfFailed, type Check } from './check.js';
import { isPlainObject } from './json.js';

/**
 * What a client declares in `_meta["io.modelcontextprotocol/clientCapabilities"]`. Loose: a
 * capability this server does not know is simply not used. `tasks` (v1) is listed only so it is
 * visibly ignored: a client with just that is non-declaring (SEP-2663).
 */
export const ClientCapabilitiesSchema = z.looseObject({
  experimental: z.record(z.string(), z.unknown()).optional(),
  roots: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  sampling: z.record(z.string(), z.unknown()).optional(),
  elicitation: z.record(z.string(), z.unknown()).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

export const ServerCapabilitiesSchema = z.looseObject({
  experimental: z.record(z.string(), z.unknown()).optional(),
  logging: z.record(z.string(), z.unknown()).optional(),
  completions: z.record(z.string(), z.unknown()).optional(),
  prompts: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  resources: z
    .looseObject({ subscribe: z.boolean().optional(), listChanged: z.boolean().optional() })
    .optional(),
  tools: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  extensions: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  /** v1 shape that MUST NOT be advertised any more (SEP-2663 §Backward Compatibility). */
  tasks: z
    .undefined({ error: 'capabilities.tasks is the removed v1 shape; use extensions' })
    .optional(),
});
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;

/** -32021 with `data.requiredCapabilities` in ClientCapabilities shape (BASIC §Error Codes). */
export function missingCapabilityError(
  requiredCapabilities: Record<string, unknown>,
  message = `Missing required client capability: this request needs ${JSON.stringify(requiredCapabilities)} declared in params._meta["io.modelcontextprotocol/clientCapabilities"]`,
): ProtocolError {
  return new ProtocolError(ErrorCode.MissingRequiredClientCapability, message, {
    requiredCapabilities,
  });
}

/**
 * Whether *this* request declared the Tasks extension (R4). Only
 * `extensions["io.modelcontextprotocol/tasks"]` (an object) counts; legacy `capabilities.tasks`
 * does not.
 */
export function declaresTasksExtension(meta: { clientCapabilities: unknown }): boolean {
  const caps = meta.clientCapabilities;
  if (!isPlainObject(caps) || !isPlainObject(caps.extensions)) return false;
  return (
    Object.hasOwn(caps.extensions, TASKS_EXTENSION_ID) &&
    isPlainObject(caps.extensions[TASKS_EXTENSION_ID])
  );
}

/** -32021 unless the request declared the extension; `action` names what needed it. */
export function requireTasksExtension(
  meta: { clientCapabilities: unknown },
  action = 'This request',
): Check {
  if (declaresTasksExtension(meta)) return passed;
  return failed(
    missingCapabilityError(
      { extensions: { [TASKS_EXTENSION_ID]: {} } },
      `${action} requires the Tasks extension: declare params._meta["io.modelcontextprotocol/clientCapabilities"].extensions["${TASKS_EXTENSION_ID}"] = {} on this request (capabilities are per request; legacy capabilities.tasks does not count)`,
    ),
  );
}

/** requireTasksExtension that throws its -32021 instead of returning it. */
export function assertTasksExtension(
  meta: { clientCapabilities: unknown },
  action = 'This request',
): void {
  throwIfFailed(requireTasksExtension(meta, action));
}
