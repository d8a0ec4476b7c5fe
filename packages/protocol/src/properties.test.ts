import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from './errors.js';
import { parseJsonRpcMessage } from './jsonrpc.js';
import { decodeHeaderValue } from './routing-headers.js';

describe('properties', () => {
  it('decodes any =?base64?…?= encoded UTF-8 string back to itself, inner whitespace kept', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const encoded = `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
        expect(decodeHeaderValue(` ${encoded} `)).toBe(text);
      }),
    );
  });

  it('either classifies any JSON value or rejects it with -32600, never another error', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          const message = parseJsonRpcMessage(value);
          expect(['request', 'notification']).toContain(message.kind);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as ProtocolError).code).toBe(-32600);
        }
      }),
    );
  });
});
