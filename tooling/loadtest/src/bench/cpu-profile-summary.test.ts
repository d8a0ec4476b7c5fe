import { describe, expect, it } from 'vitest';
import {
  kindOf,
  renderCpuProfileSummary,
  summarizeCpuProfile,
  type CpuProfile,
} from './cpu-profile-summary.js';

const frame = (functionName: string, url = '', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
});

/** root → handler (ours) → query (pg) → writev (native); plus idle and GC beside them. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4] },
    { id: 2, callFrame: frame('(idle)') },
    { id: 3, callFrame: frame('(garbage collector)') },
    {
      id: 4,
      callFrame: frame('handleMcpPost', 'file:///srv/app/apps/gateway/dist/mcp/endpoint.js', 60),
      children: [5],
    },
    {
      id: 5,
      callFrame: frame(
        'query',
        'file:///srv/app/node_modules/.pnpm/pg@8.23.1/node_modules/pg/lib/client.js',
        666,
      ),
      children: [6],
    },
    { id: 6, callFrame: frame('writev') },
  ],
  // Self time: idle 500 µs, GC 100, handler 100, pg 100, writev 200 (twice 100).
  samples: [2, 3, 4, 5, 6, 6, 2],
  timeDeltas: [400, 100, 100, 100, 100, 100, 100],
};

describe('summarizeCpuProfile', () => {
  it('splits busy time by the kind of each sample own frame, idle left out', () => {
    const summary = summarizeCpuProfile(profile);
    expect(summary.totalMs).toBeCloseTo(1.0);
    expect(summary.busyMs).toBeCloseTo(0.5);
    expect(summary.kinds).toEqual([
      { kind: 'socket writes', ms: 0.2, share: 0.4 },
      { kind: 'GC', ms: 0.1, share: 0.2 },
      { kind: 'mcp-tasks', ms: 0.1, share: 0.2 },
      { kind: 'pg + Kysely', ms: 0.1, share: 0.2 },
    ]);
    expect(summary.topSelf[0]).toEqual({ frame: 'writev', ms: 0.2, share: 0.4 });
    expect(summary.topSelf.map((f) => f.frame)).toContain(
      'handleMcpPost apps/gateway/dist/mcp/endpoint.js:61',
    );
    expect(summary.topSelf.map((f) => f.frame)).toContain('query pg/lib/client.js:667');
  });

  it('keeps only the requested number of functions', () => {
    expect(summarizeCpuProfile(profile, 2).topSelf).toHaveLength(2);
  });

  it('renders a share per kind and per function', () => {
    const text = renderCpuProfileSummary('gateway (1+1)', summarizeCpuProfile(profile, 1));
    expect(text).toBe(
      [
        'gateway (1+1): busy 1 of 1 ms sampled',
        '  by kind: socket writes 40.0%, GC 20.0%, mcp-tasks 20.0%, pg + Kysely 20.0%',
        '  top self time:',
        '     40.0%  writev',
      ].join('\n'),
    );
  });
});

describe('kindOf', () => {
  it.each([
    [frame('(idle)'), 'idle'],
    [frame('writeUtf8String'), 'socket writes'],
    [frame('epoll_pwait'), 'native (other)'],
    [
      frame(
        'sendCommand',
        'file:///x/node_modules/.pnpm/ioredis@5.8.2/node_modules/ioredis/built/Redis.js',
      ),
      'ioredis + BullMQ',
    ],
    [frame('compose', 'file:///x/node_modules/hono/dist/compose.js'), 'Hono'],
    [
      frame(
        'freeze',
        'file:///x/node_modules/.pnpm/kysely@0.28.8/node_modules/kysely/dist/esm/util/object-utils.js',
      ),
      'pg + Kysely',
    ],
    [
      frame('child', 'file:///x/node_modules/.pnpm/pino@9.0.0/node_modules/pino/lib/proto.js'),
      'other libraries',
    ],
    [frame('emit', 'node:events'), 'Node internals'],
  ])('%o is %s', (callFrame, kind) => {
    expect(kindOf(callFrame)).toBe(kind);
  });
});
