import { z } from 'zod';
import { ContentBlockV2Schema, ToolV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { Implementation } from './meta.js';
import { InputResponsesSchema } from './mrtr.js';
import { CacheHintsShape, ResultMetaSchema, withServerInfo, type CacheHints } from './results.js';
import { JsonValueSchema } from './json.js';

const MetaParam = z.record(z.string(), z.unknown()).optional();

/** Reused from ext-tasks: a tool descriptor with an object `inputSchema` (R8). */
export const ToolSchema = ToolV2Schema;
export type Tool = z.infer<typeof ToolSchema>;
export const ContentBlockSchema = ContentBlockV2Schema;

export const ListToolsParamsSchema = z.looseObject({
  cursor: z.string().optional(),
  _meta: MetaParam,
});

export const ListToolsResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  tools: z.array(ToolSchema),
  nextCursor: z.string().optional(),
  ...CacheHintsShape,
  _meta: ResultMetaSchema.optional(),
});

/** What we advertise per tool; a plain shape so tools/list output is deterministic (R8). */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object' } & Record<string, unknown>;
}

export function buildListToolsResult(
  tools: readonly ToolDescriptor[],
  hints: CacheHints,
  serverInfo: Implementation,
): {
  resultType: 'complete';
  tools: ToolDescriptor[];
  ttlMs: number;
  cacheScope: CacheHints['cacheScope'];
  _meta: Record<string, unknown>;
} {
  return withServerInfo(
    {
      resultType: 'complete' as const,
      tools: [...tools],
      ttlMs: hints.ttlMs,
      cacheScope: hints.cacheScope,
    },
    serverInfo,
  );
}

/**
 * `tools/call` params. `inputResponses` and `requestState` are MRTR retries (R13). A legacy
 * `task: {ttl, pollInterval}` is accepted and ignored: creation is server-directed (SEP-2663).
 */
export const CallToolParamsSchema = z.looseObject({
  name: z.string().min(1, 'a tool name is required'),
  arguments: z.record(z.string(), z.unknown()).optional(),
  inputResponses: InputResponsesSchema.optional(),
  requestState: z.string().optional(),
  _meta: MetaParam,
});

export const CallToolResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  content: z.array(ContentBlockSchema),
  structuredContent: JsonValueSchema.optional(),
  isError: z.boolean().optional(),
  _meta: ResultMetaSchema.optional(),
});
export type CallToolResult = z.infer<typeof CallToolResultSchema>;

/** The body a tool produced (as in `@mcp-tasks/tools` ToolResult); the wire adds the rest. */
export interface ToolResultBody {
  content: readonly unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export function buildCallToolResult(
  body: ToolResultBody,
  serverInfo: Implementation,
): {
  resultType: 'complete';
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta: Record<string, unknown>;
} {
  const result: {
    resultType: 'complete';
    content: unknown[];
    structuredContent?: unknown;
    isError?: boolean;
    _meta?: Record<string, unknown>;
  } = {
    resultType: 'complete',
    content: [...body.content],
  };
  if (body.structuredContent !== undefined) result.structuredContent = body.structuredContent;
  if (body.isError !== undefined) result.isError = body.isError;
  if (body._meta !== undefined) result._meta = body._meta;
  return withServerInfo(result, serverInfo);
}
