import { describe, expect, it } from 'vitest';
import { generateMix } from './mix.js';
import { createRng } from './prng.js';

describe('the seeded mix', () => {
  it('is the same for the same seed and differs for another', () => {
    const a = generateMix(42, 500);
    expect(generateMix(42, 500)).toEqual(a);
    expect(generateMix(43, 500)).not.toEqual(a);
    expect(a.map((p) => p.index)).toEqual([...Array(500).keys()]);
  });

  it('covers every tool, answer style, cancels, probes, pollers, subscribers and both tenants', () => {
    const mix = generateMix(7, 500);
    expect(new Set(mix.map((p) => p.tool))).toEqual(
      new Set(['slow_compute', 'multi_input', 'failing_job', 'transfer_funds']),
    );
    expect(generateMix(7, 500, { ledger: false }).some((p) => p.tool === 'transfer_funds')).toBe(
      false,
    );
    for (const p of mix.filter((x) => x.tool === 'transfer_funds')) {
      const transfers = p.arguments.transfers as { from: string; to: string; amount: number }[];
      expect(transfers.length).toBeGreaterThanOrEqual(1);
      expect(transfers.length).toBeLessThanOrEqual(3);
      for (const t of transfers) expect(t.from).not.toBe(t.to);
    }
    expect(new Set(mix.map((p) => p.answer))).toEqual(
      new Set(['full', 'partial', 'twice', 'unknown-key', 'decline']),
    );
    expect(mix.some((p) => p.cancelAfterPolls !== undefined)).toBe(true);
    expect(mix.some((p) => p.probe)).toBe(true);
    expect(new Set(mix.map((p) => p.follow))).toEqual(new Set(['poll', 'subscribe']));
    // Two tenants, the heavy one with most of the tasks.
    const light = mix.filter((p) => p.tenant === 'light').length;
    expect(light).toBeGreaterThan(50);
    expect(light).toBeLessThan(150);
    for (const p of mix.filter((x) => x.tool === 'slow_compute')) {
      expect(p.arguments.label).toBe(`job-${p.index}`);
      expect([1, 2, 3]).toContain(p.arguments.seconds);
    }
  });

  it('draws the same numbers from the same seed', () => {
    const [x, y] = [createRng(5), createRng(5)];
    const draws = (r: typeof x) => Array.from({ length: 20 }, () => r.int(0, 1000));
    expect(draws(x)).toEqual(draws(y));
  });
});
