import { InvalidArgumentError } from 'commander';

/**
 * What `--only` can pick: our measured paths and the baselines. A measurement of ours
 * brings the baselines its comparison needs, so its ratio is always against the same run.
 */
export const FIGURES = [
  'pgbench',
  'bullmq',
  'hono',
  'tasks-get',
  'create',
  'e2e',
  'e2e-effects',
  'e2e-traces',
  'e2e-realistic',
  'sync-commit',
  'events',
  'sweep',
  'at-size',
] as const;
export type Figure = (typeof FIGURES)[number];
const BASELINES_OF: Record<Figure, Figure[]> = {
  pgbench: [],
  bullmq: [],
  hono: [],
  'tasks-get': ['hono'],
  create: ['pgbench'],
  e2e: ['pgbench', 'bullmq'],
  // Its baseline (the plain one-step task) is measured inside it, on the same stack.
  'e2e-effects': [],
  // Its baseline (tracing off) is measured inside it, in turns with tracing on.
  'e2e-traces': [],
  // Its baseline (the no-input task) is measured inside it, on the same stack.
  'e2e-realistic': [],
  // Its baseline (synchronous_commit = local) is measured inside it, on the same cluster.
  'sync-commit': [],
  // Triggers on and off, alternating on the same scratch database.
  events: [],
  // Retention must keep up with creation: its rate is read against the end-to-end rate.
  sweep: ['e2e'],
  // Its baseline (the empty table) is measured inside it, on the same stack.
  'at-size': [],
};

/** The figures to measure: the chosen ones (default all) and the baselines they need. */
export function selectFigures(only: readonly Figure[] | undefined): Set<Figure> {
  if (only === undefined) return new Set(FIGURES);
  return new Set(only.flatMap((figure) => [figure, ...BASELINES_OF[figure]]));
}

/** `--only`'s argument: a comma-separated list of known figure names. */
export const parseFigureList = (value: string): Figure[] => {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(FIGURES as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0)
    throw new InvalidArgumentError(
      `unknown figure ${unknown.map((u) => `'${u}'`).join(', ')}; pick from ${FIGURES.join(', ')}`,
    );
  return names as Figure[];
};
