import { readFileSync, statSync } from 'node:fs';
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
  if (isPathSpecifier(specifier)) {
    const path = resolve(baseDir, specifier);
    return pathToFileURL(isDirectory(path) ? packageEntry(specifier, path) : path).href;
  }
  try {
    return pathToFileURL(createRequire(join(baseDir, 'package.json')).resolve(specifier)).href;
  } catch {
    return specifier;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The first target of an `exports` entry under the conditions an ESM import in Node matches. */
function exportTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) return entry.map(exportTarget).find((t) => t !== undefined);
  if (typeof entry !== 'object' || entry === null) return undefined;
  const conditions = entry as Record<string, unknown>;
  for (const condition of ['import', 'node', 'default']) {
    const target = exportTarget(conditions[condition]);
    if (target !== undefined) return target;
  }
  return undefined;
}

/**
 * A package folder (one with a package.json) loads as its package would: the root of `exports`,
 * else `main`, else index.js. Node's own import of a folder fails with "Directory import is not
 * supported", which does not say what to pass instead.
 */
function packageEntry(specifier: string, dir: string): string {
  let manifest: { exports?: unknown; main?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    throw new Error(
      `${specifier}: is a folder without a readable package.json; name the module file (e.g. ${specifier}/index.js) or a package folder`,
    );
  }
  const exported = manifest.exports;
  const root =
    typeof exported === 'object' &&
    exported !== null &&
    !Array.isArray(exported) &&
    Object.keys(exported).some((key) => key.startsWith('.'))
      ? (exported as Record<string, unknown>)['.']
      : exported;
  const target =
    exported === undefined
      ? typeof manifest.main === 'string'
        ? manifest.main
        : 'index.js'
      : exportTarget(root);
  if (target === undefined) {
    throw new Error(
      `${specifier}: its package.json exports no root entry for import (an "import" or "default" target of "."); name the module file instead`,
    );
  }
  return resolve(dir, target);
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
    const url = moduleUrl(specifier, options.baseDir);
    try {
      module = (await import(url)) as Record<string, unknown>;
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
