import { describe, expect, it } from 'vitest';
import { runFuzz } from './run-fuzz.js';

/**
 * Issue 24, item 8: the short seeded run of `pnpm fuzz` that CI runs. Every category at least
 * once: each is a sizeable share of the cases, and the seed is fixed.
 */
describe('the gateway under seeded malformed input', () => {
  it('answers every message below 500, whole, without internals, and stays healthy', async () => {
    const report = await runFuzz({ runs: 1_000, seed: 24 });
    expect(report.violations).toEqual([]);
    expect(report.gatewayErrorLogs).toEqual([]);
    expect(report.health).toEqual({ gatewayLive: true, gatewayReady: true, workerLive: true });
    expect(report.messages).toBe(1_000);
    expect(Object.keys(report.categories).sort()).toEqual([
      'batch',
      'cross_tenant',
      'deep',
      'forged_state',
      'headers',
      'huge',
      'mutated',
      'raw',
      'session',
      'unstorable',
      'wrong_answers',
    ]);
  });
});
