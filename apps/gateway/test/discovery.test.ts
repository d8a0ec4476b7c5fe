import { TOOL_PACKS, createToolCatalogue } from '@mcp-tasks/tools';
import { describe, expect, it } from 'vitest';
import { buildGateway, useGatewayUnderTest } from './support/harness.js';
import { CAPS_NONE, SERVER_INFO_META, TASKS_EXT, rpc } from './support/rpc.js';

// Discovery and the tool catalogue over in-process HTTP: server/discover (R7), tools/list (R8),
// the empty prompt/resource lists, and how tools/call decides between a sync answer and a task (R9).

const { infra, gw } = useGatewayUnderTest('gw_discovery');

describe('discovery and tools', () => {
  it('answers server/discover with versions, capabilities, cache hints and identity (R7)', async () => {
    const reply = await rpc(gw.app, 'server/discover', {}, { caps: CAPS_NONE });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {}, prompts: {}, resources: {}, extensions: { [TASKS_EXT]: {} } },
        ttlMs: 300_000,
        cacheScope: 'public',
        _meta: SERVER_INFO_META,
      },
    });
  });

  it('lists every tool in catalogue order with object input schemas and cache hints, byte-identical across instances (R8)', async () => {
    const first = await rpc(gw.app, 'tools/list', {});
    const second = await rpc(buildGateway(infra).app, 'tools/list', {}, { as: 'eve' });
    expect(first.text).toBe(second.text);
    const result = first.result;
    expect(result).toMatchObject({
      resultType: 'complete',
      ttlMs: 300_000,
      cacheScope: 'public',
      _meta: SERVER_INFO_META,
    });
    const names = (result.tools as { name: string }[]).map((tool) => tool.name);
    // The catalogue fixes the order (deterministic, not necessarily alphabetical).
    expect(names).toEqual(
      createToolCatalogue({ packs: [...TOOL_PACKS] })
        .list()
        .map((tool) => tool.name),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'confirm_delete',
        'failing_job',
        'generate_report',
        'greet',
        'multi_input',
        'protocol_error_job',
        'slow_compute',
        'test_tool_with_task',
      ]),
    );
    for (const tool of result.tools as { inputSchema: { type: string } }[])
      expect(tool.inputSchema.type).toBe('object');
  });

  it('answers prompts/list, resources/list and resources/templates/list with empty cacheable lists', async () => {
    for (const [method, field] of [
      ['prompts/list', 'prompts'],
      ['resources/list', 'resources'],
      ['resources/templates/list', 'resourceTemplates'],
    ] as const) {
      const reply = await rpc(gw.app, method, {});
      expect(reply.result).toEqual({
        resultType: 'complete',
        [field]: [],
        ttlMs: 300_000,
        cacheScope: 'public',
        _meta: SERVER_INFO_META,
      });
    }
  });

  it('answers a sync tool directly with resultType complete and serverInfo', async () => {
    const reply = await rpc(gw.app, 'tools/call', { name: 'greet', arguments: { name: 'Ada' } });
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Ada!' }],
        _meta: SERVER_INFO_META,
      },
    });
  });

  it('ignores a legacy params.task hint: a sync tool stays sync', async () => {
    const reply = await rpc(gw.app, 'tools/call', {
      name: 'greet',
      arguments: { name: 'Ada' },
      task: { ttl: 1000 },
    });
    expect(reply.result.resultType).toBe('complete');
  });

  it('serves a task-optional tool synchronously to a non-declaring client and as a task to a declaring one', async () => {
    const sync = await rpc(
      gw.app,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 1 } },
      { caps: CAPS_NONE },
    );
    expect(sync.result.resultType).toBe('complete');
    const task = await rpc(gw.app, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 2 },
    });
    expect(task.result.resultType).toBe('task');
  });
});
