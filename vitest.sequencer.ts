import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the slowest test files first, across every project (vitest's own order runs the projects
 * one after another, so the worker app's long drills came last and set the run's tail). The
 * seconds per file come from scripts/ci/test-durations.json, written from a whole run's JSON
 * report by `node scripts/ci/record-test-durations.mjs`; a file it does not list runs after
 * the listed ones. A stale list only changes the order, never what runs.
 */
export class LongestFirstSequencer extends BaseSequencer {
  readonly #seconds: Record<string, number> = JSON.parse(
    readFileSync(new URL('./scripts/ci/test-durations.json', import.meta.url), 'utf8'),
  ) as Record<string, number>;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (file: TestSpecification) => this.#seconds[relative(root, file.moduleId)] ?? 0;
    return Promise.resolve([...files].sort((a, b) => seconds(b) - seconds(a)));
  }
}
