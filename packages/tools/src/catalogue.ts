import { CONFORMANCE_TOOLS } from './conformance/index.js';
import { REPORT_TOOLS } from './reports/index.js';
import type { ToolDefinition } from '@mcp-tasks/tool-sdk';
import type { ToolModule } from './load-modules.js';

export const TOOL_PACKS = ['reports', 'conformance'] as const;
export type ToolPack = (typeof TOOL_PACKS)[number];

const PACK_TOOLS: Record<ToolPack, readonly ToolDefinition[]> = {
  reports: REPORT_TOOLS,
  conformance: CONFORMANCE_TOOLS,
};

export interface ToolCatalogue {
  /**
   * Deterministic, the same on every replica with the same packs (R8): synchronous tools first,
   * then task tools, each group by name. Generic clients probe the first listed tool with `{}`
   * and no Tasks extension; a cheap sync tool answers that, a task-only one could not.
   */
  list(): ToolDefinition[];
  get(name: string): ToolDefinition | undefined;
}

function compareForListing(a: ToolDefinition, b: ToolDefinition): number {
  const group = Number(a.mode !== 'sync') - Number(b.mode !== 'sync');
  if (group !== 0) return group;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function isToolPack(name: string): name is ToolPack {
  return (TOOL_PACKS as readonly string[]).includes(name);
}

/**
 * The enabled packs' tools and those of loaded modules (MCP_TOOL_MODULES). An unknown pack name,
 * or a tool name defined twice (by two packs, two modules, or a pack and a module), throws at
 * startup naming both sources.
 */
export function createToolCatalogue(options: {
  packs: readonly string[];
  modules?: readonly ToolModule[];
}): ToolCatalogue {
  const unknown = options.packs.filter((pack) => !isToolPack(pack));
  if (unknown.length > 0) {
    throw new Error(
      `unknown tool pack(s) ${unknown.map((p) => JSON.stringify(p)).join(', ')}; valid packs: ${TOOL_PACKS.join(', ')}`,
    );
  }
  const byName = new Map<string, ToolDefinition>();
  const sourceOf = new Map<string, string>();
  const add = (tool: ToolDefinition, source: string) => {
    const earlier = sourceOf.get(tool.name);
    if (earlier !== undefined)
      throw new Error(
        `tool ${tool.name} is defined by more than one source: ${earlier}, ${source}`,
      );
    byName.set(tool.name, tool);
    sourceOf.set(tool.name, source);
  };
  for (const pack of new Set(options.packs as readonly ToolPack[])) {
    for (const tool of PACK_TOOLS[pack]) add(tool, `pack ${pack}`);
  }
  for (const module of options.modules ?? []) {
    for (const tool of module.tools) add(tool, `module ${module.specifier}`);
  }
  const sorted = [...byName.values()].sort(compareForListing);
  return {
    list: () => [...sorted],
    get: (name) => byName.get(name),
  };
}
