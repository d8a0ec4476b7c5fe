import { describe, expect, it } from 'vitest';
import { parseGcTrace, summarizeGc } from './gc-trace.js';

// Lines as Node's --trace-gc-nvp prints them, cut after the fields read here (the last as Node 24
// does, with a thread after the isolate).
const OUTPUT = [
  '{"level":40,"msg":"a log line in between"}',
  '[14620:0x18bb1c60]     3006 ms: pause=5.2 mutator=610.3 gc=s reduce_memory=0 scavenge=4.9 allocated=13726232 promoted=2528488 nodes_promoted=9',
  '[14620:0x18bb1c60]     3097 ms: pause=8.0 mutator=624.8 gc=mc reduce_memory=0 allocated=1222000 promoted=0',
  '[14620:0x18bb1c60]     3700 ms: pause=3.1 mutator=600.0 gc=s reduce_memory=0 allocated=12771104 promoted=2117872',
  '[14620:0x18bb1c60:0]     9000 ms: pause=9.9 mutator=600.0 gc=s reduce_memory=0 allocated=100 promoted=100',
].join('\n');

describe('GC trace', () => {
  it('reads each collection with its kind, time, pause and bytes', () => {
    expect(parseGcTrace(OUTPUT)).toEqual([
      {
        atMs: 3006,
        kind: 'scavenge',
        pauseMs: 5.2,
        allocatedBytes: 13726232,
        promotedBytes: 2528488,
      },
      { atMs: 3097, kind: 'mark-compact', pauseMs: 8, allocatedBytes: 1222000, promotedBytes: 0 },
      {
        atMs: 3700,
        kind: 'scavenge',
        pauseMs: 3.1,
        allocatedBytes: 12771104,
        promotedBytes: 2117872,
      },
      { atMs: 9000, kind: 'scavenge', pauseMs: 9.9, allocatedBytes: 100, promotedBytes: 100 },
    ]);
  });

  it('summarizes one window: scavenge pauses, the promoted share, each mark-compact', () => {
    const summary = summarizeGc(parseGcTrace(OUTPUT), 3000, 9000);
    expect(summary.scavenges).toBe(2);
    expect(summary.scavengePauseMs).toBeCloseTo(8.3);
    expect(summary.maxScavengePauseMs).toBe(5.2);
    expect(summary.promotedShare).toBeCloseTo(
      (2528488 + 2117872) / (13726232 + 1222000 + 12771104),
    );
    expect(summary.markCompacts).toEqual([{ atMs: 3097, pauseMs: 8 }]);
  });

  it('summarizes an empty window as nothing collected', () => {
    expect(summarizeGc(parseGcTrace(OUTPUT), 0, 1000)).toEqual({
      scavenges: 0,
      scavengePauseMs: 0,
      maxScavengePauseMs: 0,
      promotedShare: 0,
      markCompacts: [],
    });
  });
});
