import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** A seeded PRNG (pure-rand's xoroshiro128+): the same seed gives the same draws. */
export interface Rng {
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function createRng(seed: number): Rng {
  const generator = xoroshiro128plus(seed | 0);
  const int = (min: number, max: number) => uniformInt(generator, min, max);
  return {
    int,
    chance: (probability) => int(0, 9_999) < probability * 10_000,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
  };
}

/** A 32-bit seed from any text, so `--seed` can be a word (FNV-1a). */
export function seedFromText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
