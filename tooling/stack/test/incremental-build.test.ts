import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStale } from '../src/incremental-build.js';

let dir: string;

async function file(path: string, secondsAgo: number, content = ''): Promise<void> {
  const full = join(dir, path);
  await mkdir(join(full, '..'), { recursive: true });
  await writeFile(full, content);
  const at = new Date(Date.now() - secondsAgo * 1_000);
  await utimes(full, at, at);
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'incremental-build-'));
  await file('package.json', 100);
  await file('tsconfig.build.json', 100, '{}');
  await file('src/main.ts', 50);
  await file('src/lib/a.ts', 50);
  await file('src/lib/a.test.ts', 1);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('isStale', () => {
  it('is fresh when every source has a newer output, whatever an orphaned output says', async () => {
    await file('dist/main.js', 10);
    await file('dist/lib/a.js', 10);
    // Left behind by a source that was renamed since: tsc never rewrites it.
    await file('dist/lib/renamed-away.js', 1_000);
    expect(await isStale(dir)).toBe(false);
  });

  it('is stale when a source is newer than its output, or has none', async () => {
    await file('dist/main.js', 10);
    await file('dist/lib/a.js', 60);
    expect(await isStale(dir)).toBe(true);
    await file('dist/lib/a.js', 10);
    await file('src/lib/new.ts', 5);
    expect(await isStale(dir)).toBe(true);
  });

  it('ignores the sources tsconfig.build.json excludes from the build', async () => {
    const exclude = JSON.stringify({ exclude: ['src/**/*.test.ts', 'src/testing'] });
    await file('tsconfig.build.json', 100, exclude);
    await file('dist/main.js', 10);
    await file('dist/lib/a.js', 10);
    // Never emitted: the build excludes it.
    await file('src/testing/arbitrary.ts', 5);
    expect(await isStale(dir)).toBe(false);
  });

  it('is stale when package.json or the build tsconfig changed after the last build', async () => {
    await file('dist/main.js', 10);
    await file('dist/lib/a.js', 10);
    await file('tsconfig.build.json', 1, '{}');
    expect(await isStale(dir)).toBe(true);
  });
});
