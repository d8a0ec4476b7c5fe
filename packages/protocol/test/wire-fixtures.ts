/**
 * Wire examples from the seed lesson (SEED in docs/protocol-rules.md) and the DISC example, verbatim
 * apart from the `params` of requests, which the seed shows with the `_meta` they carry.
 */
export const serverInfo = { name: 'tasks-demo', version: '1.0.0' };

export const taskMeta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

export const seedMetaWithClientInfo = {
  _meta: {
    ...taskMeta,
    'io.modelcontextprotocol/clientInfo': { name: 'lesson-client', version: '1.0.0' },
  },
};

export const toolsCallRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'generate_report', arguments: { size: 'large' }, _meta: taskMeta },
};

export const createTaskResponse = {
  jsonrpc: '2.0',
  id: 1,
  result: {
    resultType: 'task',
    taskId: 'tsk_786512e29e0d',
    status: 'working',
    statusMessage: 'Preparing report outline.',
    createdAt: '2026-08-21T10:30:00Z',
    lastUpdatedAt: '2026-08-21T10:30:00Z',
    ttlMs: 900000,
    pollIntervalMs: 1000,
  },
};

export const tasksGetRequest = {
  jsonrpc: '2.0',
  id: 2,
  method: 'tasks/get',
  params: { taskId: 'tsk_786512e29e0d', _meta: taskMeta },
};

export const completedSnapshot = {
  resultType: 'complete',
  taskId: 'tsk_786512e29e0d',
  status: 'completed',
  createdAt: '2026-08-21T10:30:00Z',
  lastUpdatedAt: '2026-08-21T10:34:12Z',
  ttlMs: 900000,
  result: {
    resultType: 'complete',
    content: [{ type: 'text', text: 'Generated large report with approved outline.' }],
    structuredContent: { size: 'large', approved: true },
    isError: false,
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'tasks-demo', version: '1.0.0' } },
  },
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'tasks-demo', version: '1.0.0' } },
};

export const inputRequiredSnapshot = {
  resultType: 'complete',
  taskId: 'tsk_786512e29e0d',
  status: 'input_required',
  createdAt: '2026-08-21T10:30:00Z',
  lastUpdatedAt: '2026-08-21T10:31:00Z',
  ttlMs: 900000,
  inputRequests: {
    approve_outline: {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'Approve the generated report outline?',
        requestedSchema: {
          type: 'object',
          properties: { approved: { type: 'boolean' } },
          required: ['approved'],
        },
      },
    },
  },
};

export const tasksUpdateRequest = {
  jsonrpc: '2.0',
  id: 4,
  method: 'tasks/update',
  params: {
    taskId: 'tsk_786512e29e0d',
    inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
    _meta: taskMeta,
  },
};

export const tasksCancelRequest = {
  jsonrpc: '2.0',
  id: 5,
  method: 'tasks/cancel',
  params: { taskId: 'tsk_786512e29e0d', _meta: taskMeta },
};

/** The DISC example (R7). */
export const discoverResult = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'x', version: '1' } },
  ttlMs: 3600000,
  cacheScope: 'public',
};
