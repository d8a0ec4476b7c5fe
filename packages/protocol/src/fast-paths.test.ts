import { describe, expect, it } from 'vitest';
import { ClientCapabilitiesSchema } from './capabilities.js';
import { ProtocolError } from './errors.js';
import { copyForExtension } from './json.js';
import { ImplementationSchema, validateRequestMeta } from './meta.js';
import { parseParams } from './params.js';
import { withServerInfo } from './results.js';
import { TaskIdParamsSchema, parseTaskIdParams } from './tasks.js';

const V = 'io.modelcontextprotocol/protocolVersion';
const C = 'io.modelcontextprotocol/clientCapabilities';
const I = 'io.modelcontextprotocol/clientInfo';

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** The hand-written checks that skip a schema on the hot path answer exactly as the schema does. */
describe('schema fast paths', () => {
  const taskIdParams: unknown[] = [
    { taskId: 'task_1' },
    { taskId: 'task_1', _meta: { [V]: '2026-07-28' }, extra: [1] },
    { taskId: 7 },
    {},
    undefined,
    { taskId: 'task_1', _meta: 'not an object' },
    { taskId: 'task_1', _meta: [] },
    { taskId: 'task_1', _meta: null },
  ];
  it.each(taskIdParams)('parseTaskIdParams(%j) agrees with TaskIdParamsSchema', (params) => {
    const viaSchema = TaskIdParamsSchema.safeParse(params ?? {});
    if (viaSchema.success) {
      expect(parseTaskIdParams(params)).toEqual({ taskId: viaSchema.data.taskId });
    } else {
      const fast = thrown(() => parseTaskIdParams(params));
      const slow = thrown(() => parseParams(TaskIdParamsSchema, params));
      expect(fast).toBeInstanceOf(ProtocolError);
      expect(fast).toEqual(slow);
    }
  });

  const capabilities: unknown[] = [
    {},
    { extensions: { 'io.modelcontextprotocol/tasks': {} }, sampling: {}, other: 1 },
    { roots: { listChanged: true }, elicitation: { form: {} } },
    { roots: { listChanged: 'yes' } },
    { roots: [] },
    { sampling: 'on' },
    { extensions: [] },
    { experimental: null },
  ];
  it.each(capabilities)('validateRequestMeta keeps capabilities %j as the schema does', (caps) => {
    const result = validateRequestMeta({ _meta: { [V]: '2026-07-28', [C]: caps } });
    const viaSchema = ClientCapabilitiesSchema.safeParse(caps);
    expect(result.ok).toBe(viaSchema.success);
    if (result.ok && viaSchema.success) {
      expect(result.meta.clientCapabilities).toEqual(viaSchema.data);
    }
    if (!result.ok) expect(result.error.message).toMatch(/^Malformed params\._meta/);
  });

  const clientInfos: unknown[] = [
    { name: 'c', version: '1' },
    { name: 'c', version: '1', title: 'C', extra: true },
    { name: 'c', version: 1 },
    { name: 'c', version: '1', title: 3 },
    'c',
    undefined,
  ];
  it.each(clientInfos)('validateRequestMeta reads clientInfo %j as the schema does', (info) => {
    const result = validateRequestMeta({ _meta: { [V]: '2026-07-28', [C]: {}, [I]: info } });
    const viaSchema = ImplementationSchema.safeParse(info);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.meta.clientInfo).toEqual(viaSchema.success ? viaSchema.data : undefined);
    }
  });
});

describe('copies that take more keys', () => {
  it('withServerInfo keeps every key where the spread put it, a JSON "__proto__" included', () => {
    const result = JSON.parse(
      '{"a":1,"_meta":{"x":1,"io.modelcontextprotocol/serverInfo":0,"__proto__":{"p":1}},"__proto__":{"q":2},"z":3}',
    ) as Record<string, unknown>;
    const built = withServerInfo(result, { name: 'gw', version: '1' });
    expect(JSON.stringify(built)).toBe(
      '{"a":1,"_meta":{"x":1,"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"},' +
        '"__proto__":{"p":1}},"__proto__":{"q":2},"z":3}',
    );
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
    expect(JSON.stringify(result)).toBe(
      '{"a":1,"_meta":{"x":1,"io.modelcontextprotocol/serverInfo":0,"__proto__":{"p":1}},"__proto__":{"q":2},"z":3}',
    );
  });

  it('copyForExtension copies own keys only and leaves the original alone', () => {
    const original = { a: 1, b: { c: 2 } };
    const copy = copyForExtension(original) as Record<string, unknown>;
    copy.d = 4;
    expect(copy).toStrictEqual({ a: 1, b: { c: 2 }, d: 4 });
    expect(original).toStrictEqual({ a: 1, b: { c: 2 } });
    expect(copy.b).toBe(original.b);
  });
});
