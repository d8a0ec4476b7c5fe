import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  createRequestStateCodec,
  digestArguments,
  type RequestStateBinding,
} from './request-state.js';

const binding: RequestStateBinding = {
  tenant: 'acme',
  principal: 'alice',
  method: 'tools/call',
  toolName: 'test_tool_with_task',
  argumentsDigest: digestArguments({ a: 1 }),
};

const ASK = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } },
};

function codecAt(time: { now: number }, secret = 'x'.repeat(32)) {
  return createRequestStateCodec({ secret, ttlMs: 1000, now: () => time.now });
}

describe('request state', () => {
  it('verifies a state it issued for the same binding and returns the round keys', () => {
    const codec = codecAt({ now: 0 });
    const state = codec.issue(binding, { user_name: ASK });
    expect(codec.verify(state, binding)).toEqual({ ok: true, inputRequests: { user_name: ASK } });
  });

  it('rejects a state whose payload was altered', () => {
    const codec = codecAt({ now: 0 });
    const [body, signature] = codec.issue(binding, { user_name: ASK }).split('.') as [
      string,
      string,
    ];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const forged = Buffer.from(JSON.stringify({ ...payload, sub: 'mallory' })).toString(
      'base64url',
    );
    expect(codec.verify(`${forged}.${signature}`, binding)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects a state signed with another secret', () => {
    const state = codecAt({ now: 0 }, 'y'.repeat(32)).issue(binding, { k: ASK });
    expect(codecAt({ now: 0 }).verify(state, binding)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects an expired state', () => {
    const time = { now: 0 };
    const codec = codecAt(time);
    const state = codec.issue(binding, { k: ASK });
    time.now = 1000;
    expect(codec.verify(state, binding)).toEqual({ ok: false, reason: 'expired' });
  });

  it('rejects a state replayed by another principal, tool or with other arguments', () => {
    const codec = codecAt({ now: 0 });
    const state = codec.issue(binding, { k: ASK });
    for (const other of [
      { ...binding, principal: 'bob' },
      { ...binding, tenant: 'other' },
      { ...binding, toolName: 'greet' },
      { ...binding, argumentsDigest: digestArguments({ a: 2 }) },
    ]) {
      expect(codec.verify(state, other)).toEqual({ ok: false, reason: 'mismatch' });
    }
  });

  it('rejects garbage as malformed', () => {
    const codec = codecAt({ now: 0 });
    expect(codec.verify('garbage', binding)).toEqual({ ok: false, reason: 'malformed' });
    expect(codec.verify('', binding)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('digests arguments independently of key order', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe(
      '{"a":null,"b":[1,{"c":2,"d":1}]}',
    );
    expect(digestArguments({ x: 1, y: 2 })).toBe(digestArguments({ y: 2, x: 1 }));
    expect(digestArguments({ x: 1 })).not.toBe(digestArguments({ x: 2 }));
  });
});

describe('request state nonce (issue 11, item 5)', () => {
  it('issues distinct states for identical rounds in the same instant, naming distinct tasks', () => {
    const codec = codecAt({ now: 0 });
    const first = codec.issue(binding, { user_name: ASK });
    const second = codec.issue(binding, { user_name: ASK });
    expect(second).not.toBe(first);
    const answers = { user_name: { action: 'accept', content: { name: 'A' } } };
    expect(codec.deriveTaskId(second, answers)).not.toBe(codec.deriveTaskId(first, answers));
    // A retry of the same final round still names the same task.
    expect(codec.deriveTaskId(first, answers)).toBe(codec.deriveTaskId(first, answers));
  });
});
