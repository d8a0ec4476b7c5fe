import { describe, expect, it } from 'vitest';
import { CliExit } from './exit-codes.js';
import { traceContextFromEnv } from './trace-env.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('traceContextFromEnv', () => {
  it('takes TRACEPARENT and TRACESTATE as they are, trimmed', () => {
    expect(
      traceContextFromEnv({ TRACEPARENT: ` ${TRACEPARENT}\n`, TRACESTATE: 'a=1,b=2' }),
    ).toEqual({ traceparent: TRACEPARENT, tracestate: 'a=1,b=2' });
    expect(traceContextFromEnv({ TRACEPARENT: TRACEPARENT.replace(/01$/, '00') })).toEqual({
      traceparent: TRACEPARENT.replace(/01$/, '00'),
    });
  });

  it('is undefined when TRACEPARENT is unset or empty, whatever TRACESTATE says', () => {
    expect(traceContextFromEnv({})).toBeUndefined();
    expect(traceContextFromEnv({ TRACEPARENT: ' ', TRACESTATE: 'a=1' })).toBeUndefined();
  });

  it.each([
    ['not hex', '00-0af7651916cd43dd8448eb211c80319z-b7ad6b7169203331-01'],
    ['uppercase', TRACEPARENT.toUpperCase()],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-b7ad6b7169203331-01`],
    ['an all-zero span id', `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`],
    ['another version', TRACEPARENT.replace(/^00/, 'ff')],
    ['no flags', TRACEPARENT.slice(0, -3)],
    ['a short trace id', TRACEPARENT.replace('0af7', '0af')],
  ])('refuses a TRACEPARENT with %s (usage error)', (_what, value) => {
    let thrown: unknown;
    try {
      traceContextFromEnv({ TRACEPARENT: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CliExit);
    expect(thrown).toMatchObject({
      code: 2,
      message: `TRACEPARENT=${JSON.stringify(value)} is not a traceparent: expected 00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>, lowercase, ids not all zeros (W3C Trace Context)`,
    });
  });

  it('refuses a TRACESTATE longer than 512 characters', () => {
    expect(() => traceContextFromEnv({ TRACEPARENT, TRACESTATE: `a=${'x'.repeat(511)}` })).toThrow(
      /^TRACESTATE=".*" is not a tracestate: expected key=value pairs/,
    );
  });
});
