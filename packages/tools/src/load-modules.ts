import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assertToolDefinition, type ToolDefinition } from '@mcp-tasks/tool-sdk';

/** The tools one module contributed, and the specifier they came from (for error messages). */
export interface ToolModule {
  specifier: string;
  tools: ToolDefinition[];
}

const isPathSpecifier = (specifier: string) =>
  specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier);

/**
 * A module's URL: paths from `baseDir` (the process's working directory in production), package
 * names as a package installed beside the app would resolve (from `baseDir`'s node_modules,
 * falling back to this package's own resolution, which finds the image's workspace packages).
 */
function moduleUrl(specifier: string, baseDir: string): string {
  if (isPathSpecifier(specifier)) return pathToFileURL(resolve(baseDir, specifier)).href;
  try {
    return pathToFileURL(createRequire(join(baseDir, 'package.json')).resolve(specifier)).href;
  } catch {
    return specifier;
  }
}

/** A module exports its tools as `tools` or as its default export: an array of definitions. */
function exportedTools(specifier: string, module: Record<string, unknown>): unknown[] {
  const exported = module.tools ?? module.default;
  if (!Array.isArray(exported)) {
    throw new Error(
      `${specifier}: exports no tools (expected \`export const tools = [...]\` or \`export default [...]\`)`,
    );
  }
  return exported as unknown[];
}

/**
 * Imports each tool module named in MCP_TOOL_MODULES and checks every definition it exports, so
 * a missing module or a malformed tool stops the process at startup with the module's name.
 */
export async function loadToolModules(
  specifiers: readonly string[],
  options: { baseDir: string },
): Promise<ToolModule[]> {
  const loaded: ToolModule[] = [];
  for (const specifier of specifiers) {
    let module: Record<string, unknown>;
    try {
      module = (await import(moduleUrl(specifier, options.baseDir))) as Record<string, unknown>;
    } catch (error) {
      throw new Error(
        `${specifier}: could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const tools = exportedTools(specifier, module).map((tool) =>
      assertToolDefinition(tool, specifier),
    );
    if (tools.length === 0) throw new Error(`${specifier}: exports an empty tool list`);
    loaded.push({ specifier, tools });
  }
  return loaded;
}
