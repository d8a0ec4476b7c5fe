import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Runs the projects one after another, the slowest project first, and within a project its
 * slowest files first. Test files share a worker's loaded modules (`isolate: false`), and vitest
 * hands a worker on to the next file only when that file is of the same project: interleaving
 * projects would start a fresh worker, and import the whole app again, for nearly every file.
 * Slowest first keeps the long drills off the run's tail; the projects that end it are the ones
 * of short, pure files. The seconds per file come from scripts/ci/test-durations.json, written
 * from a whole run's JSON report by `node scripts/ci/record-test-durations.mjs`; a file it does
 * not list counts as 0 s. A stale list only changes the order, never what runs.
 */
export class LongestFirstSequencer extends BaseSequencer {
  readonly #seconds: Record<string, number> = JSON.parse(
    readFileSync(new URL('./scripts/ci/test-durations.json', import.meta.url), 'utf8'),
  ) as Record<string, number>;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (file: TestSpecification) => this.#seconds[relative(root, file.moduleId)] ?? 0;
    const projectSeconds = new Map<string, number>();
    for (const file of files) {
      const project = file.project.name;
      projectSeconds.set(project, (projectSeconds.get(project) ?? 0) + seconds(file));
    }
    const ofProject = (file: TestSpecification) => projectSeconds.get(file.project.name) ?? 0;
    return Promise.resolve(
      [...files].sort(
        (a, b) =>
          ofProject(b) - ofProject(a) ||
          a.project.name.localeCompare(b.project.name) ||
          seconds(b) - seconds(a),
      ),
    );
  }
}
