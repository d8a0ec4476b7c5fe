import { describe, expect, it } from 'vitest';
import type { LatencySummary } from '../report/latency.js';
import { parseDuration } from './soak-command.js';
import { evaluateSoakTargets, type SoakOutcome, type SoakWindow } from './soak-targets.js';
import { sumMetric } from './storage-sampler.js';

const latency = (p99: number): LatencySummary => ({
  count: 10,
  p50: p99 / 2,
  p95: p99,
  p99,
  max: p99,
});

function window(index: number, bytes: number, dead: number, live: number): SoakWindow {
  return {
    index,
    startS: index * 60,
    endS: (index + 1) * 60,
    createdPerS: 100,
    terminalPerS: 100,
    create: latency(10),
    get: latency(5),
    errors: 0,
    inFlight: 10,
    shed: 0,
    storage: {
      tables: {
        tasks: {
          liveTuples: live,
          deadTuples: dead,
          tableBytes: bytes,
          indexBytes: bytes,
          autovacuums: 0,
          autoanalyzes: 0,
          updates: 0,
          hotUpdates: 0,
        },
      },
      redisUsedBytes: 1,
      swept: { expired: 0, deleted: 0, redispatched: 0 },
    },
    swept: { expired: 0, deleted: 0, redispatched: 0 },
  };
}

function outcome(overrides: Partial<SoakOutcome> = {}): SoakOutcome {
  return {
    windows: Array.from({ length: 30 }, (_, i) => window(i, 1_000_000, 100, 10_000)),
    askedRatePerS: 100,
    phaseWindows: 5,
    phases: {
      createFirst: latency(10),
      createLast: latency(14),
      getFirst: latency(5),
      getLast: latency(5),
    },
    referenceWindow: 9,
    lost: 0,
    violations: 0,
    ...overrides,
  };
}

describe('the soak targets', () => {
  it('are met by a flat run', () => {
    expect(evaluateSoakTargets(outcome()).filter((t) => !t.met)).toEqual([]);
  });

  it('miss a p99 that grew past 1.5×, storage that kept growing, and dead tuples at 20 %', () => {
    const windows = outcome().windows;
    windows[29] = window(29, 1_400_000, 100, 10_000);
    windows[20] = window(20, 1_000_000, 2_000, 10_000);
    const missed = evaluateSoakTargets(
      outcome({
        windows,
        phases: { ...outcome().phases, createLast: latency(15.1) },
        lost: 1,
      }),
    ).filter((t) => !t.met);
    expect(missed.map((t) => [t.target, t.got])).toEqual([
      ['create p99, last ÷ first 5 window(s)', '15.10 ÷ 10.00 ms = 1.51×'],
      ['tasks table + indexes, end ÷ window 10 (600 s)', '2.7 MB ÷ 1.9 MB = 1.40×'],
      ['dead ÷ live tuples in tasks, worst window from the reference on', '20.0 %'],
      ['lost tasks', '1'],
    ]);
  });

  it('misses a rate the client could not hold', () => {
    const windows = outcome().windows.map((w) => ({ ...w, createdPerS: 90 }));
    const held = evaluateSoakTargets(outcome({ windows }))[0]!;
    expect(held).toEqual({
      target: 'creates per second held',
      want: '≥ 0.95 × 100.0/s asked',
      got: '90.0/s (0.90×)',
      met: false,
    });
  });
});

describe('soak inputs', () => {
  it('reads durations in seconds, minutes or hours, and refuses anything else', () => {
    expect([
      parseDuration('90'),
      parseDuration('90s'),
      parseDuration('30m'),
      parseDuration('1.5h'),
    ]).toEqual([90, 90, 1_800, 5_400]);
    expect(() => parseDuration('30 minutes')).toThrow('expected a duration such as 90s, 30m or 1h');
    expect(() => parseDuration('0s')).toThrow('expected at least one second');
  });

  it('sums one metric over its labelled lines of a Prometheus page', () => {
    const page = [
      '# HELP mcp_worker_swept_tasks_total Tasks the sweeper failed …',
      'mcp_worker_swept_tasks_total{step="expire"} 12',
      'mcp_worker_swept_tasks_total{step="delete"} 30',
      'mcp_worker_swept_tasks_total_other 99',
      'mcp_worker_tasks_redispatched_total 4',
    ].join('\n');
    expect(sumMetric(page, 'mcp_worker_swept_tasks_total', ['step', 'expire'])).toBe(12);
    expect(sumMetric(page, 'mcp_worker_swept_tasks_total')).toBe(42);
    expect(sumMetric(page, 'mcp_worker_tasks_redispatched_total')).toBe(4);
  });
});
