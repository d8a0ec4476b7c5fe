import { describe, expect, it } from 'vitest';
import { useGatewayUnderTest } from './support/harness.js';
import {
  CAPS_NONE,
  PROTOCOL,
  TASKS_EXT,
  rpc,
  rpcBody,
  rpcHeaders,
  readReply,
} from './support/rpc.js';

const { gw } = useGatewayUnderTest('gw_errors');

const requiredTasks = { requiredCapabilities: { extensions: { [TASKS_EXT]: {} } } };

async function post(body: string, headers: Headers) {
  return readReply(await gw.app.request('/mcp', { method: 'POST', headers, body }));
}

describe('HTTP layer', () => {
  it('answers GET and DELETE on /mcp with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const reply = await readReply(await gw.app.request('/mcp', { method }));
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toBe('POST');
      expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    }
  });

  it('refuses a body that is not application/json with 415', async () => {
    const headers = rpcHeaders('server/discover', {});
    headers.set('Content-Type', 'text/plain');
    const reply = await post(JSON.stringify(rpcBody('server/discover', {})), headers);
    expect(reply.status).toBe(415);
    expect(reply.error.code).toBe(-32600);
  });

  it('refuses an Accept that allows neither JSON nor SSE with 406', async () => {
    const headers = rpcHeaders('server/discover', {});
    headers.set('Accept', 'text/html');
    const reply = await post(JSON.stringify(rpcBody('server/discover', {})), headers);
    expect(reply.status).toBe(406);
  });

  it('answers 401 with WWW-Authenticate without credentials and with a bad token', async () => {
    const missing = await rpc(gw.app, 'server/discover', {}, { as: null });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="mcp"');
    expect(missing.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    const bad = await rpc(
      gw.app,
      'server/discover',
      {},
      { headers: { Authorization: 'Bearer nope-nope-nope-nope' } },
    );
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="mcp", error="invalid_token"');
  });

  it('answers a disallowed Origin with 403 and allows loopback origins', async () => {
    const evil = await rpc(
      gw.app,
      'server/discover',
      {},
      { headers: { Origin: 'https://evil.example' } },
    );
    expect(evil.status).toBe(403);
    const local = await rpc(
      gw.app,
      'server/discover',
      {},
      { headers: { Origin: 'http://localhost:5173' } },
    );
    expect(local.status).toBe(200);
  });

  it('answers an oversized body with 413 and a JSON-RPC error body', async () => {
    const params = { name: 'greet', arguments: { name: 'x'.repeat(70 * 1024) } };
    const reply = await rpc(gw.app, 'tools/call', params);
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('answers invalid JSON with -32700 and 400', async () => {
    const reply = await post('{"jsonrpc":"2.0",', rpcHeaders('server/discover', {}));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('answers a batch or a non-JSON-RPC object with -32600 and 400', async () => {
    const batch = await post(
      JSON.stringify([rpcBody('server/discover', {})]),
      rpcHeaders('server/discover', {}),
    );
    expect(batch.status).toBe(400);
    expect(batch.error.code).toBe(-32600);
    const noVersion = await post(
      JSON.stringify({ id: 1, method: 'server/discover' }),
      rpcHeaders('server/discover', {}),
    );
    expect(noVersion.status).toBe(400);
    expect(noVersion.error.code).toBe(-32600);
  });

  it('accepts a notification with 202 and no body (R1)', async () => {
    const reply = await rpc(
      gw.app,
      'notifications/cancelled',
      { requestId: 1 },
      { notification: true, meta: null },
    );
    expect(reply.status).toBe(202);
    expect(reply.text).toBe('');
  });

  it('sends X-Request-Id on every reply and never Mcp-Session-Id', async () => {
    const ok = await rpc(gw.app, 'server/discover', {});
    const failed = await rpc(gw.app, 'nope/nope', {});
    for (const reply of [ok, failed]) {
      expect(reply.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(reply.headers.get('mcp-session-id')).toBeNull();
    }
    const echoed = await rpc(
      gw.app,
      'server/discover',
      {},
      { headers: { 'X-Request-Id': 'trace-123' } },
    );
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
  });
});

describe('envelope and _meta (R2, R3, R5)', () => {
  it('answers unknown and removed methods with 404 and -32601, keeping the id', async () => {
    for (const method of [
      'tasks/status',
      'tasks/result',
      'tasks/list',
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'no/such',
    ]) {
      const reply = await rpc(gw.app, method, {}, { id: `req-${method}` });
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({
        jsonrpc: '2.0',
        id: `req-${method}`,
        error: { code: -32601 },
      });
    }
  });

  it('treats id: null as a request and answers it with id: null (R1)', async () => {
    const reply = await rpc(gw.app, 'server/discover', {}, { id: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      result: { resultType: 'complete' },
    });
  });

  it('answers a missing _meta, version or capabilities with -32602 and 400', async () => {
    const noMeta = await rpc(gw.app, 'server/discover', {}, { meta: null, id: 7 });
    expect(noMeta.status).toBe(400);
    expect(noMeta.body).toMatchObject({ id: 7, error: { code: -32602 } });
    const noVersion = await rpc(
      gw.app,
      'server/discover',
      {},
      {
        meta: { 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    );
    expect(noVersion.status).toBe(400);
    expect(noVersion.error.code).toBe(-32602);
    const numericVersion = await rpc(
      gw.app,
      'server/discover',
      {},
      {
        meta: {
          'io.modelcontextprotocol/protocolVersion': 20260728,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    );
    expect(numericVersion.error.code).toBe(-32602);
    const noCaps = await rpc(
      gw.app,
      'server/discover',
      {},
      {
        meta: { 'io.modelcontextprotocol/protocolVersion': PROTOCOL },
      },
    );
    expect(noCaps.status).toBe(400);
    expect(noCaps.error.code).toBe(-32602);
  });

  it('serves a request without clientInfo', async () => {
    const reply = await rpc(
      gw.app,
      'server/discover',
      {},
      {
        meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    );
    expect(reply.status).toBe(200);
  });

  it('answers an unsupported version with -32022 and exact data, before checking capabilities', async () => {
    const reply = await rpc(
      gw.app,
      'server/discover',
      {},
      {
        version: 'v999.0.0',
        meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' },
      },
    );
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32022);
    expect(reply.error.data).toEqual({ supported: ['2026-07-28'], requested: 'v999.0.0' });
  });
});

describe('routing headers (R23)', () => {
  it('answers a header version that disagrees with _meta with -32020, even for an unsupported body version', async () => {
    const reply = await rpc(
      gw.app,
      'server/discover',
      {},
      { version: 'v999.0.0', headers: { 'MCP-Protocol-Version': PROTOCOL } },
    );
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32020);
  });

  it('answers missing MCP-Protocol-Version or Mcp-Method with -32020', async () => {
    for (const header of ['MCP-Protocol-Version', 'Mcp-Method']) {
      const reply = await rpc(gw.app, 'server/discover', {}, { headers: { [header]: null } });
      expect(reply.status).toBe(400);
      expect(reply.error.code).toBe(-32020);
    }
  });

  it('answers an Mcp-Method that disagrees with the body with -32020', async () => {
    const reply = await rpc(gw.app, 'tools/list', {}, { headers: { 'Mcp-Method': 'tools/call' } });
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32020);
  });

  it('answers a missing or mismatched Mcp-Name with -32020 and accepts the base64 form', async () => {
    const missing = await rpc(
      gw.app,
      'tools/call',
      { name: 'greet', arguments: { name: 'A' } },
      { headers: { 'Mcp-Name': null } },
    );
    expect(missing.status).toBe(400);
    expect(missing.error.code).toBe(-32020);
    const wrong = await rpc(
      gw.app,
      'tasks/get',
      { taskId: 'tsk_aaaaaaaaaaaaaaaaaaaaaaaa' },
      { headers: { 'Mcp-Name': 'tsk_bbbbbbbbbbbbbbbbbbbbbbbb' } },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.error.code).toBe(-32020);
    const encoded = `=?base64?${Buffer.from('greet').toString('base64')}?=`;
    const ok = await rpc(
      gw.app,
      'tools/call',
      { name: 'greet', arguments: { name: 'A' } },
      { headers: { 'Mcp-Name': encoded } },
    );
    expect(ok.status).toBe(200);
  });
});

describe('capabilities (R4, R9)', () => {
  const taskId = 'tsk_aaaaaaaaaaaaaaaaaaaaaaaa';

  it('answers every task method from a non-declaring request with -32021 and exact data', async () => {
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/update', { taskId, inputResponses: {} }],
      ['tasks/cancel', { taskId }],
    ] as const) {
      const reply = await rpc(gw.app, method, params, { caps: CAPS_NONE });
      expect(reply.status).toBe(400);
      expect(reply.error.code).toBe(-32021);
      expect(reply.error.data).toEqual(requiredTasks);
    }
  });

  it('treats the legacy capabilities.tasks as non-declaring', async () => {
    const reply = await rpc(
      gw.app,
      'tasks/get',
      { taskId },
      { caps: { tasks: { requests: { tools: { call: {} } } } } },
    );
    expect(reply.error.code).toBe(-32021);
  });

  it('answers subscriptions/listen with taskIds from a non-declaring request with -32021', async () => {
    const reply = await rpc(
      gw.app,
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      { caps: CAPS_NONE },
    );
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32021);
    expect(reply.error.data).toEqual(requiredTasks);
  });

  it('answers a task-only tool from a non-declaring request with -32021', async () => {
    const reply = await rpc(
      gw.app,
      'tools/call',
      { name: 'failing_job', arguments: {} },
      { caps: CAPS_NONE },
    );
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32021);
    expect(reply.error.data).toEqual(requiredTasks);
  });
});

describe('params (-32602)', () => {
  it('answers an unknown tool and invalid arguments with -32602', async () => {
    const unknown = await rpc(gw.app, 'tools/call', { name: 'no_such_tool', arguments: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.error.code).toBe(-32602);
    const invalid = await rpc(gw.app, 'tools/call', {
      name: 'generate_report',
      arguments: { size: 'huge' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.error.code).toBe(-32602);
    expect(invalid.error.data).toMatchObject({ issues: [{ path: 'params.arguments.size' }] });
  });

  it('answers tasks methods without a string taskId with -32602', async () => {
    const reply = await rpc(gw.app, 'tasks/get', { taskId: 42 });
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32602);
  });

  it('answers an unknown or malformed task id with the same -32602 on get, update and cancel', async () => {
    const errors = [];
    for (const taskId of ['tsk_doesnotexistdoesnotexist', 'not-a-task-id']) {
      for (const [method, params] of [
        ['tasks/get', { taskId }],
        ['tasks/update', { taskId, inputResponses: {} }],
        ['tasks/cancel', { taskId }],
      ] as const) {
        const reply = await rpc(gw.app, method, params);
        expect(reply.status).toBe(400);
        errors.push(reply.error);
      }
    }
    expect(errors[0]).toEqual({ code: -32602, message: 'Task not found or expired' });
    for (const error of errors) expect(error).toEqual(errors[0]);
  });
});
