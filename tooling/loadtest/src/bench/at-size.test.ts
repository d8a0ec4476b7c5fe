import { describe, expect, it } from 'vitest';
import { pairedOrderRatio } from './at-size.js';

describe('pairedOrderRatio', () => {
  it('cancels the order of each pair of rounds, then takes the median pair', () => {
    // Pairs: √(2 × 0.5) = 1, √(1.5 × 1.5) = 1.5, √(4 × 1) = 2.
    expect(pairedOrderRatio([2, 0.5, 1.5, 1.5, 4, 1])).toBeCloseTo(1.5, 10);
  });

  it('leaves out a last round without its pair', () => {
    expect(pairedOrderRatio([2, 0.5, 9])).toBeCloseTo(1, 10);
  });
});
