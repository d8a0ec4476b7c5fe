import { Command, InvalidArgumentError } from 'commander';
import { checkHistory } from './check/checker.js';
import { readHistory } from './history/read-history.js';
import { writeHtmlReport } from './report/html-report.js';
import { renderSummaryTable, renderViolations } from './report/summary-table.js';
import { summarizeRun } from './report/summary.js';
import { buildTimeline } from './report/timeline.js';

/**
 * `pnpm loadtest check HISTORY [--report DIR]`: checks a recorded history offline, prints the
 * summary and every violation, writes the HTML report if asked; exits 1 on any violation.
 */
async function check(path: string, options: { report?: string }): Promise<void> {
  const records = await readHistory(path);
  const result = checkHistory(records);
  const summary = summarizeRun(records, result);
  console.log(renderSummaryTable(summary, process.stdout.isTTY));
  if (options.report !== undefined) {
    const written = await writeHtmlReport(
      options.report,
      summary,
      buildTimeline(records, result),
      result,
    );
    console.log(`report: ${written}`);
  }
  for (const r of result.reExecutions)
    console.log(
      `re-executed after takeover: task ${r.taskId} step ${r.step} in epochs ${r.epochs.join(', ')}`,
    );
  if (result.ok) {
    console.log(`checker passed: ${result.acknowledgedTasks} acknowledged tasks, no violation`);
    return;
  }
  console.error(renderViolations(result));
  console.error(`checker failed: ${result.violations.length} violation(s)`);
  process.exitCode = 1;
}

const nonEmpty = (value: string) => {
  if (value.trim() === '') throw new InvalidArgumentError('expected a directory');
  return value;
};

const program = new Command('loadtest')
  .description('Load and chaos tests for mcp-tasks: record a history, check it, report on it.')
  .showHelpAfterError();
program
  .command('check')
  .description(
    'check a recorded history (JSON lines) for lost tasks, illegal transitions, reused input keys, cross-tenant reads, wrong results and overlapping steps',
  )
  .argument('<history>', 'the history file (JSON lines)')
  .option('--report <dir>', 'also write a self-contained HTML report to DIR/index.html', nonEmpty)
  .action(check);

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
