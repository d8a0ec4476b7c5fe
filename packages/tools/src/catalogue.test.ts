import { toolDefinitionProblems } from '@mcp-tasks/tool-sdk';
import { describe, expect, it } from 'vitest';
import { TOOL_PACKS, createToolCatalogue } from './catalogue.js';

describe('createToolCatalogue', () => {
  it('lists sync tools first, then task tools, each by name', () => {
    const names = createToolCatalogue({ packs: TOOL_PACKS })
      .list()
      .map((t) => t.name);
    expect(names).toEqual([
      'greet',
      'test_logging_tool',
      'test_missing_capability',
      'test_streaming_elicitation',
      'test_trigger_prompt_change',
      'test_trigger_tool_change',
      'confirm_delete',
      'failing_job',
      'generate_report',
      'multi_input',
      'protocol_error_job',
      'slow_compute',
      'test_tool_with_task',
    ]);
  });

  it('serves only the enabled packs', () => {
    const catalogue = createToolCatalogue({ packs: ['reports'] });
    expect(catalogue.list().map((t) => t.name)).toEqual(['generate_report']);
    expect(catalogue.get('greet')).toBeUndefined();
    expect(catalogue.get('generate_report')?.mode).toBe('task');
  });

  it('throws on an unknown pack, naming the valid ones', () => {
    expect(() => createToolCatalogue({ packs: ['reports', 'nope'] })).toThrow(
      /unknown tool pack\(s\) "nope"; valid packs: reports, conformance/,
    );
  });

  it('gives every tool an object input schema and a program matching its mode', () => {
    for (const tool of createToolCatalogue({ packs: TOOL_PACKS }).list()) {
      expect(tool.inputSchema.type).toBe('object');
      if (tool.mode === 'sync') expect(tool.runSync).toBeTypeOf('function');
      else expect(tool.task).toBeDefined();
      if (tool.mode === 'task-optional') {
        expect(tool.runSync).toBeTypeOf('function');
        expect(tool.prefersTask).toBeTypeOf('function');
      }
    }
  });

  it('passes the checks a loaded module gets: the built-ins use the public API as plug-ins do', () => {
    for (const tool of createToolCatalogue({ packs: TOOL_PACKS }).list())
      expect([tool.name, toolDefinitionProblems(tool)]).toEqual([tool.name, []]);
  });

  it('produces the same listing bytes on every call', () => {
    const a = JSON.stringify(createToolCatalogue({ packs: TOOL_PACKS }).list());
    const b = JSON.stringify(createToolCatalogue({ packs: ['conformance', 'reports'] }).list());
    expect(a).toBe(b);
  });
});
