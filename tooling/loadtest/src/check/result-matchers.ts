import { SECTION_COUNT, type ReportSize } from '@mcp-tasks/tools';

/** Says what is wrong with a completed result for these arguments, or null when it matches. */
type ResultMatcher = (args: Record<string, unknown>, result: unknown) => string | null;

function firstText(result: unknown): string | undefined {
  const content = (result as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) return undefined;
  const block = content[0] as { type?: unknown; text?: unknown } | undefined;
  return block?.type === 'text' && typeof block.text === 'string' ? block.text : undefined;
}

const expectText =
  (expected: (args: Record<string, unknown>) => string, isError = false): ResultMatcher =>
  (args, result) => {
    const want = expected(args);
    const got = firstText(result);
    if (got !== want) return `expected text ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
    const flagged = (result as { isError?: unknown }).isError === true;
    return flagged === isError ? null : `expected isError ${isError}, got ${flagged}`;
  };

const reportMatcher: ResultMatcher = (args, result) => {
  const size = args.size as ReportSize;
  const text = firstText(result) ?? '';
  const markdown = text.startsWith(`# Report (${size})`);
  if (!markdown && !text.startsWith(`<article><h1>Report (${size})</h1>`))
    return `expected a ${size} report, got ${JSON.stringify(text.slice(0, 60))}`;
  const sections = (markdown ? text.match(/^## \d+\. /gm) : text.match(/<section>/g))?.length ?? 0;
  const want = SECTION_COUNT[size];
  return sections === want ? null : `expected ${want} sections, got ${sections}`;
};

/** The tools whose results follow from their arguments; others are not checked (and counted). */
export const RESULT_MATCHERS: Readonly<Record<string, ResultMatcher>> = {
  failing_job: expectText(() => 'Tool execution failed: failing_job always fails', true),
  slow_compute: expectText(
    (args) =>
      `Computed ${(args.label as string | undefined) ?? 'computation'} in ${String(args.seconds)} s`,
  ),
  test_tool_with_task: expectText(
    (args) => `Hello, ${(args.name as string | undefined) ?? 'stranger'}! Your task is done.`,
  ),
  generate_report: reportMatcher,
  transfer_funds: expectText((args) => {
    const n = (args.transfers as unknown[] | undefined)?.length ?? 0;
    return `Transferred ${n} of ${n}.`;
  }),
};
