import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createToolCatalogue } from './catalogue.js';
import { loadToolModules } from './load-modules.js';

const baseDir = fileURLToPath(new URL('../test/fixtures/', import.meta.url));

describe('loadToolModules (MCP_TOOL_MODULES)', () => {
  it('loads `tools` or the default export from paths relative to the base directory', async () => {
    const modules = await loadToolModules(['./echo-pack.ts', './default-export-pack.ts'], {
      baseDir,
    });
    expect(modules.map((m) => [m.specifier, m.tools.map((t) => t.name)])).toEqual([
      ['./echo-pack.ts', ['echo']],
      ['./default-export-pack.ts', ['echo_again']],
    ]);
    const catalogue = createToolCatalogue({ packs: ['reports'], modules });
    expect(catalogue.list().map((t) => t.name)).toEqual(['echo', 'echo_again', 'generate_report']);
  });

  it('loads a package folder through the root of its exports', async () => {
    const modules = await loadToolModules(['./echo-package'], { baseDir });
    expect(modules.map((m) => [m.specifier, m.tools.map((t) => t.name)])).toEqual([
      ['./echo-package', ['echo_from_package']],
    ]);
  });

  it('says what to pass for a folder that is not a package', async () => {
    await expect(loadToolModules(['./plain-folder'], { baseDir })).rejects.toThrow(
      './plain-folder: is a folder without a readable package.json; name the module file (e.g. ./plain-folder/index.js) or a package folder',
    );
  });

  it('names the module that cannot be found', async () => {
    await expect(loadToolModules(['./nowhere.js'], { baseDir })).rejects.toThrow(
      /^\.\/nowhere\.js: could not be loaded: /,
    );
    await expect(loadToolModules(['@acme/not-installed'], { baseDir })).rejects.toThrow(
      /^@acme\/not-installed: could not be loaded: /,
    );
  });

  it('names the module and every problem of a malformed tool', async () => {
    await expect(loadToolModules(['./broken-pack.ts'], { baseDir })).rejects.toThrow(
      './broken-pack.ts: tool half_done is invalid: inputSchema: must be a JSON Schema object with type "object"; arguments: must be a zod schema; task: mode task needs a task program with start and step',
    );
  });

  it('refuses a module that exports no tool list', async () => {
    await expect(loadToolModules(['./no-tools.ts'], { baseDir })).rejects.toThrow(
      './no-tools.ts: exports no tools (expected `export const tools = [...]` or `export default [...]`)',
    );
  });

  it('refuses a module tool that shadows a built-in, naming both sources', async () => {
    const modules = await loadToolModules(['./clashing-pack.ts'], { baseDir });
    expect(() => createToolCatalogue({ packs: ['reports'], modules })).toThrow(
      'tool generate_report is defined by more than one source: pack reports, module ./clashing-pack.ts',
    );
  });
});
