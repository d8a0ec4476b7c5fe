import fc from 'fast-check';
import { deepValue, toJsonText } from './json-text.js';
import { applyMutation, awkwardString, mutation, setAt, wildValue, allPaths } from './mutate.js';

/** What the fuzzer found on the server before it started: real ids, states and tokens. */
export interface FuzzWorld {
  tokens: { alice: string; eve: string };
  /** Alice's tasks, in every state the setup could reach. */
  aliceTasks: string[];
  /** Alice's tasks waiting for input, with their outstanding keys. */
  awaitingInput: { taskId: string; keys: string[] }[];
  /** Tasks of another tenant (eve, globex), for cross-tenant requests. */
  eveTasks: string[];
  /** A round-one requestState of test_tool_with_task, for alice and for eve. */
  requestStates: { alice: string; eve: string };
}

/** One HTTP request as bytes: through Node's client, or raw on a socket (malformed HTTP). */
export type FuzzRequest =
  | { kind: 'http'; headers: Record<string, string>; body: string | Buffer; chunked: boolean }
  | { kind: 'raw'; bytes: string };

export type Category =
  | 'mutated'
  | 'deep'
  | 'huge'
  | 'unstorable'
  | 'headers'
  | 'batch'
  | 'raw'
  | 'forged_state'
  | 'wrong_answers'
  | 'cross_tenant'
  | 'session';

/**
 * One case: a request, or (category `session`) a sequence against one task it creates first:
 * each later body's TASK_PLACEHOLDER becomes that task's id.
 */
export interface FuzzCase {
  category: Category;
  requests: FuzzRequest[];
}

export const TASK_PLACEHOLDER = '\u0002task';
const PROTOCOL = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL,
  'io.modelcontextprotocol/clientCapabilities': {
    elicitation: {},
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

type Params = Record<string, unknown>;

export function envelope(method: string, params: Params, id: number | string): Params {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } };
}

/** The headers the client library sends for this call (routing headers, R23). */
export function headersFor(method: string, params: Params, token: string): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL,
    'Mcp-Method': method,
    Authorization: `Bearer ${token}`,
  };
  const name = method === 'tools/call' ? params.name : params.taskId;
  if (typeof name === 'string') headers['Mcp-Name'] = name;
  return headers;
}

function http(method: string, message: unknown, params: Params, token: string): FuzzRequest {
  return {
    kind: 'http',
    headers: headersFor(method, params, token),
    body: toJsonText(message),
    chunked: false,
  };
}

/** The well-formed calls every mutation starts from, over the world's real ids and states. */
function templates(world: FuzzWorld): fc.Arbitrary<{ method: string; params: Params }> {
  const aliceTask = fc.constantFrom(...world.aliceTasks);
  const awaiting = fc.constantFrom(...world.awaitingInput);
  return fc.oneof(
    fc.constant({ method: 'server/discover', params: {} }),
    fc.constant({ method: 'tools/list', params: {} }),
    fc.constant({ method: 'tools/call', params: { name: 'greet', arguments: { name: 'Ann' } } }),
    fc.constant({
      method: 'tools/call',
      params: { name: 'generate_report', arguments: { size: 'small' } },
    }),
    fc.jsonValue({ maxDepth: 2 }).map((value) => ({
      method: 'tools/call',
      params: { name: 'keep_anything', arguments: { value } },
    })),
    fc.constant({ method: 'tools/call', params: { name: 'test_tool_with_task', arguments: {} } }),
    fc.constant({
      method: 'tools/call',
      params: {
        name: 'test_tool_with_task',
        arguments: {},
        requestState: world.requestStates.alice,
        inputResponses: { user_name: { action: 'accept', content: { name: 'Ann' } } },
      },
    }),
    aliceTask.map((taskId) => ({ method: 'tasks/get', params: { taskId } })),
    aliceTask.map((taskId) => ({ method: 'tasks/cancel', params: { taskId } })),
    awaiting.map(({ taskId, keys }) => ({
      method: 'tasks/update',
      params: {
        taskId,
        inputResponses: Object.fromEntries(
          keys.map((key) => [key, { action: 'accept', content: { approve: true } }]),
        ),
      },
    })),
    aliceTask.map((taskId) => ({
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [taskId] } },
    })),
  );
}

const ids = fc.oneof(fc.nat(), fc.string({ maxLength: 8 }));

/** A template with 1–3 mutations anywhere in its envelope (every field, at every depth). */
const mutatedCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> =>
  fc
    .tuple(templates(world), ids, fc.array(mutation, { minLength: 1, maxLength: 3 }))
    .map(([{ method, params }, id, changes]) => {
      const message = changes.reduce(applyMutation, envelope(method, params, id) as unknown);
      return { category: 'mutated', requests: [http(method, message, params, world.tokens.alice)] };
    });

/** A value placed at a random path inside params (not replacing params itself). */
const placedInParams = (
  world: FuzzWorld,
  category: Category,
  value: fc.Arbitrary<unknown>,
): fc.Arbitrary<FuzzCase> =>
  fc.tuple(templates(world), ids, fc.nat(), value).map(([{ method, params }, id, pick, placed]) => {
    const message = envelope(method, params, id);
    const inParams = allPaths(message).filter((path) => path[0] === 'params' && path.length > 1);
    const path = inParams.length === 0 ? ['params', 'x'] : inParams[pick % inParams.length]!;
    return {
      category,
      requests: [http(method, setAt(message, path, placed), params, world.tokens.alice)],
    };
  });

const deepCase = (world: FuzzWorld) =>
  placedInParams(
    world,
    'deep',
    fc
      .tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom('array', 'object'))
      .map(([depth, kind]) => deepValue(depth, kind)),
  );

const hugeCase = (world: FuzzWorld) =>
  placedInParams(
    world,
    'huge',
    fc.oneof(
      fc.integer({ min: 10_000, max: 1_100_000 }).map((size) => 'y'.repeat(size)),
      fc.integer({ min: 1_000, max: 150_000 }).map((size) => Array.from({ length: size }, () => 0)),
      fc
        .integer({ min: 100, max: 20_000 })
        .map((size) => Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}`, i]))),
    ),
  );

const unstorableCase = (world: FuzzWorld) =>
  placedInParams(
    world,
    'unstorable',
    fc.oneof(
      awkwardString,
      awkwardString.map((key) => ({ [key]: 'v' })),
      fc.array(awkwardString, { minLength: 1, maxLength: 3 }),
    ),
  );

/** A valid call with its headers bent: missing, wrong, another tenant's, huge, garbage. */
const headersCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> => {
  const bent = fc.oneof(
    fc.record({
      header: fc.constantFrom(
        'Content-Type',
        'Accept',
        'Authorization',
        'MCP-Protocol-Version',
        'Mcp-Method',
        'Mcp-Name',
        'Origin',
        'X-Request-Id',
      ),
      value: fc.oneof(
        fc.constant(undefined),
        fc.constantFrom(
          'text/plain',
          'application/json; charset=latin1',
          'text/html',
          '*/*',
          'Bearer ',
          'Basic YWxpY2U6cGFzcw==',
          `Bearer ${world.tokens.eve}`,
          'Bearer tok_nobody_000000000000000',
          '2025-06-18',
          '9999-99-99',
          'tools/list',
          'tasks/get',
          'https://evil.example',
          'null',
        ),
        fc
          .string({ unit: 'grapheme-ascii', maxLength: 30 })
          .map((s) => s.replace(/[^\x20-\x7e]/g, '')),
        fc.integer({ min: 1_000, max: 12_000 }).map((size) => 'h'.repeat(size)),
      ),
    }),
  );
  return fc
    .tuple(templates(world), ids, fc.array(bent, { minLength: 1, maxLength: 3 }))
    .map(([{ method, params }, id, changes]) => {
      const request = http(method, envelope(method, params, id), params, world.tokens.alice);
      if (request.kind !== 'http') throw new Error('unreachable');
      for (const { header, value } of changes) {
        if (value === undefined) delete request.headers[header];
        else request.headers[header] = value;
      }
      return { category: 'headers', requests: [request] };
    });
};

const batchCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> =>
  fc.array(fc.tuple(templates(world), ids), { maxLength: 3 }).map((calls) => {
    const batch = calls.map(([{ method, params }, id]) => envelope(method, params, id));
    const first = calls[0]?.[0] ?? { method: 'server/discover', params: {} };
    return {
      category: 'batch',
      requests: [http(first.method, batch, first.params, world.tokens.alice)],
    };
  });

/** Bodies that are not JSON-RPC at all, and HTTP that Node's parser refuses. */
const rawCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> => {
  const valid = toJsonText(envelope('server/discover', {}, 1));
  const headers = headersFor('server/discover', {}, world.tokens.alice);
  const body = fc.oneof(
    fc.constantFrom('', ' ', '{', '{"jsonrpc":"2.0",', 'null', '[]', '"x"', '1e999', '{"a":1}{'),
    fc.constantFrom(
      valid.replace('"server/discover"', '"\\ud800"'),
      valid.replace('"2.0"', '"\\u0000"'),
      valid.slice(0, valid.length - 3),
    ),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  );
  const httpCase = fc.tuple(body, fc.boolean()).map(([text, chunked]): FuzzCase => ({
    category: 'raw',
    requests: [{ kind: 'http', headers, body: text, chunked }],
  }));
  const head = (extra: string[]) =>
    [
      'POST /mcp HTTP/1.1',
      'Host: fuzz',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ...extra,
      'Connection: close',
      '',
      '',
    ].join('\r\n');
  const socketCase = fc
    .constantFrom(
      // A malformed chunk size after a good chunk.
      `${head(['Transfer-Encoding: chunked'])}10\r\n${valid.slice(0, 16)}\r\nzz\r\n\r\n`,
      // Both lengths (request smuggling shape).
      `${head(['Transfer-Encoding: chunked', `Content-Length: ${valid.length}`])}0\r\n\r\n`,
      // A declared length longer than what comes (the client then closes).
      `${head([`Content-Length: ${valid.length + 50}`])}${valid}`,
      // A header line Node refuses.
      `${head(['Bad Header: x'])}${valid}`,
      'GET /mcp HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n',
      'NONSENSE\r\n\r\n',
    )
    .map((bytes): FuzzCase => ({ category: 'raw', requests: [{ kind: 'raw', bytes }] }));
  return fc.oneof({ weight: 4, arbitrary: httpCase }, { weight: 1, arbitrary: socketCase });
};

/** MRTR rounds with states that were altered, forged, expired-looking or someone else's. */
const forgedStateCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> => {
  const real = world.requestStates.alice;
  const state = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.constant(world.requestStates.eve),
    fc
      .nat({ max: real.length - 1 })
      .map((at) => `${real.slice(0, at)}${real[at] === 'A' ? 'B' : 'A'}${real.slice(at + 1)}`),
    fc.nat({ max: real.length }).map((at) => real.slice(0, at)),
    fc.constant(`${real}.x`),
    fc.constant(real.split('.').reverse().join('.')),
    wildValue,
  );
  const args = fc.oneof(
    fc.constant({}),
    fc.jsonValue({ maxDepth: 2 }).map((v) => ({ v })),
  );
  const answers = fc.oneof(
    fc.constant({ user_name: { action: 'accept', content: { name: 'Ann' } } }),
    fc.dictionary(fc.string({ maxLength: 10 }), wildValue, { maxKeys: 3 }),
    wildValue,
  );
  return fc
    .tuple(state, args, answers, ids)
    .map(([requestState, argumentsValue, inputResponses, id]) => {
      const params = {
        name: 'test_tool_with_task',
        arguments: argumentsValue,
        requestState,
        inputResponses,
      };
      return {
        category: 'forged_state',
        requests: [
          http('tools/call', envelope('tools/call', params, id), params, world.tokens.alice),
        ],
      };
    });
};

/** Answers of the wrong shape to real outstanding keys (tasks/update) and to a real MRTR round. */
const wrongAnswersCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> => {
  const answer = fc.oneof(
    wildValue,
    fc.record({ action: fc.oneof(fc.constantFrom('accept', 'decline', 'cancel'), wildValue) }),
    fc.record({
      action: fc.constant('accept'),
      content: fc.oneof(wildValue, fc.dictionary(fc.string({ maxLength: 8 }), wildValue)),
    }),
  );
  const update = fc
    .tuple(fc.constantFrom(...world.awaitingInput), answer, ids)
    .map(([{ taskId, keys }, value, id]) => {
      const params = {
        taskId,
        inputResponses: Object.fromEntries(keys.map((key) => [key, value])),
      };
      return http('tasks/update', envelope('tasks/update', params, id), params, world.tokens.alice);
    });
  const mrtr = fc.tuple(answer, ids).map(([value, id]) => {
    const params = {
      name: 'test_tool_with_task',
      arguments: {},
      requestState: world.requestStates.alice,
      inputResponses: { user_name: value },
    };
    return http('tools/call', envelope('tools/call', params, id), params, world.tokens.alice);
  });
  return fc
    .oneof(update, mrtr)
    .map((request): FuzzCase => ({ category: 'wrong_answers', requests: [request] }));
};

/** Another tenant's real task ids, on every task method, as alice (and alice's as eve). */
const crossTenantCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> =>
  fc
    .tuple(
      fc.constantFrom('tasks/get', 'tasks/cancel', 'tasks/update', 'subscriptions/listen'),
      fc.oneof(
        fc.constantFrom(...world.eveTasks).map((taskId) => ({ taskId, token: world.tokens.alice })),
        fc.constantFrom(...world.aliceTasks).map((taskId) => ({ taskId, token: world.tokens.eve })),
      ),
      ids,
    )
    .map(([method, { taskId, token }, id]) => {
      const params: Params =
        method === 'tasks/update'
          ? { taskId, inputResponses: { approval: { action: 'accept', content: {} } } }
          : method === 'subscriptions/listen'
            ? { notifications: { taskIds: [taskId] } }
            : { taskId };
      return {
        category: 'cross_tenant',
        requests: [http(method, envelope(method, params, id), params, token)],
      };
    });

/** create → update / get / cancel / listen of that task, each step possibly mutated. */
const sessionCase = (world: FuzzWorld): fc.Arbitrary<FuzzCase> => {
  const step = fc.tuple(
    fc.constantFrom(
      'tasks/get',
      'tasks/update',
      'tasks/cancel',
      'tasks/update',
      'subscriptions/listen',
    ),
    fc.option(mutation, { freq: 3 }),
    ids,
  );
  const create = fc.tuple(
    fc.constantFrom('generate_report', 'keep_anything', 'multi_input', 'confirm_delete'),
    fc.option(mutation, { freq: 4 }),
  );
  return fc
    .tuple(create, fc.array(step, { minLength: 1, maxLength: 5 }))
    .map(([[tool, createChange], steps]) => {
      const createParams = {
        name: tool,
        arguments:
          tool === 'generate_report'
            ? { size: 'small' }
            : tool === 'confirm_delete'
              ? { path: '/tmp/x' }
              : {},
      };
      let createMessage: unknown = envelope('tools/call', createParams, 'create');
      if (createChange !== null) createMessage = applyMutation(createMessage, createChange);
      const requests: FuzzRequest[] = [
        http('tools/call', createMessage, createParams, world.tokens.alice),
      ];
      for (const [method, change, id] of steps) {
        const params: Params =
          method === 'tasks/update'
            ? {
                taskId: TASK_PLACEHOLDER,
                inputResponses: {
                  approval: { action: 'accept', content: { approve: true } },
                  confirm: { action: 'accept', content: { confirm: true } },
                },
              }
            : method === 'subscriptions/listen'
              ? { notifications: { taskIds: [TASK_PLACEHOLDER] } }
              : { taskId: TASK_PLACEHOLDER };
        let message: unknown = envelope(method, params, id);
        if (change !== null) message = applyMutation(message, change);
        requests.push(http(method, message, params, world.tokens.alice));
      }
      return { category: 'session', requests };
    });
};

/** Every category, weighted so that a short run still visits each one. */
export function fuzzCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
    { weight: 30, arbitrary: mutatedCase(world) },
    { weight: 8, arbitrary: deepCase(world) },
    { weight: 6, arbitrary: hugeCase(world) },
    { weight: 8, arbitrary: unstorableCase(world) },
    { weight: 10, arbitrary: headersCase(world) },
    { weight: 4, arbitrary: batchCase(world) },
    { weight: 8, arbitrary: rawCase(world) },
    { weight: 6, arbitrary: forgedStateCase(world) },
    { weight: 6, arbitrary: wrongAnswersCase(world) },
    { weight: 6, arbitrary: crossTenantCase(world) },
    { weight: 8, arbitrary: sessionCase(world) },
  );
}
