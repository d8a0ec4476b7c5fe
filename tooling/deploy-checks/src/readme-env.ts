/** One row of an app README's environment table: a variable and what the README says its default is. */
export interface DocumentedVariable {
  name: string;
  documentedDefault: string;
  line: number;
}

/**
 * The variables in the table under `## Environment` of an app README. A row may document several
 * variables (`` `PORT` / `HOST` ``); its default cell then holds one default per name in the same
 * order (`` `8080` / `0.0.0.0` ``), or one text that applies to all of them.
 */
export function readmeEnvironment(markdown: string): DocumentedVariable[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === '## Environment');
  if (start < 0) throw new Error('no "## Environment" section');
  const rows: DocumentedVariable[] = [];
  for (let i = start + 1; i < lines.length && !/^#{1,3} /.test(lines[i] ?? ''); i += 1) {
    const cells = (lines[i] ?? '').split('|').map((cell) => cell.trim());
    // A table row is `| name | default | meaning |`: cells 1 and 2 after the leading empty one.
    const [, nameCell = '', defaultCell = ''] = cells;
    const names = [...nameCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? '');
    if (names.length === 0) continue;
    const defaults = defaultCell.split(' / ');
    names.forEach((name, index) => {
      const documentedDefault = defaults.length === names.length ? defaults[index] : defaultCell;
      rows.push({ name, documentedDefault: (documentedDefault ?? '').trim(), line: i + 1 });
    });
  }
  return rows;
}
