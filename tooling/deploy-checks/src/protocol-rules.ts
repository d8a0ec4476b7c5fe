import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Where the protocol rules live; every id the repository cites must be defined there. */
export const RULES_DOCUMENT = 'docs/protocol-rules.md';

/** What docs/protocol-rules.md defines. */
export interface RuleBook {
  /** Bold ids opening a list item or a table row: `R17`, `C32`, `EXT`, `SEP-2663`. */
  ids: Map<string, number>;
  /** Source key → the `§Section` names its row lists. */
  sections: Map<string, Set<string>>;
  /** Everything written in backticks: the conformance scenario and check ids. */
  codeSpans: Set<string>;
}

export function readRuleBook(markdown: string): RuleBook {
  const ids = new Map<string, number>();
  const sections = new Map<string, Set<string>>();
  for (const line of markdown.split('\n')) {
    const match = /^\s*(?:- |\| )\*\*([A-Za-z0-9-]+?)\.?\*\*/.exec(line);
    if (!match?.[1]) continue;
    const id = match[1];
    ids.set(id, (ids.get(id) ?? 0) + 1);
    if (line.trimStart().startsWith('|')) {
      const named = [...line.matchAll(/§([^·|]+)/g)].map((m) => unescapeMarkdown(m[1] ?? ''));
      sections.set(id, new Set(named));
    }
  }
  const codeSpans = new Set([...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? ''));
  return { ids, sections, codeSpans };
}

function unescapeMarkdown(text: string): string {
  return text.replace(/\\(.)/g, '$1').trim();
}

/** One cited id, with the offset where its citation starts. */
export interface Citation {
  index: number;
  cited: string;
  /** Why it is not defined; undefined when it is. */
  problem: string | undefined;
}

// A comment that wraps between a key and what it qualifies continues after `*` or `//`.
const GAP = String.raw`\s+(?:(?:\*|//)\s+)?`;
const NUMBERED = /(?<![\w-])([RC])(\d{1,3})(?:\s*[–-]\s*\1(\d{1,3}))?(?![\w-])/g;
const SECTION = new RegExp(
  String.raw`(?<![\w-])([A-Z][A-Z0-9-]*[A-Z0-9])${GAP}§([^);,.\n\`*]+)`,
  'g',
);
const CONF_ID = new RegExp(String.raw`\bCONF${GAP}([a-z0-9]+(?:-[a-z0-9]+)+)`, 'g');
const SEP = /(?<![\w-])SEP-(\d+)(?![\w-])/g;
/** The documents the rules were copied from, which a newcomer cannot open (spelt so that this
 * line does not match itself). */
const OUTSIDE = /SPEC[-]NOTES|PROTOCOL\.md|\/work\/shared|mcp-tasks-lesson\.zh/g;

/** Every rule id, checklist item, source section, conformance id and SEP a text cites. */
export function citationsIn(text: string, book: RuleBook): Citation[] {
  const found: Citation[] = [];
  const idProblem = (id: string) => (book.ids.has(id) ? undefined : `${id} is not defined`);

  for (const m of text.matchAll(NUMBERED)) {
    const [, letter = '', first = '', last] = m;
    const from = Number(first);
    const to = last === undefined ? from : Number(last);
    if (to < from) {
      found.push({ index: m.index, cited: m[0], problem: `${m[0]} is a backwards range` });
      continue;
    }
    for (let n = from; n <= to; n += 1) {
      const id = `${letter}${n}`;
      found.push({ index: m.index, cited: id, problem: idProblem(id) });
    }
  }
  for (const m of text.matchAll(SECTION)) {
    const [, key = '', rawSection = ''] = m;
    const section = unescapeMarkdown(rawSection);
    const cited = `${key} §${section}`;
    const known = book.sections.get(key);
    const problem = !book.ids.has(key)
      ? `${key} is not a source key`
      : known?.has(section)
        ? undefined
        : `${cited}: ${key} has no section "${section}" listed`;
    found.push({ index: m.index, cited, problem });
  }
  for (const m of text.matchAll(CONF_ID)) {
    const id = m[1] ?? '';
    const problem = book.codeSpans.has(id)
      ? undefined
      : `CONF ${id} is not a listed scenario or check`;
    found.push({ index: m.index, cited: `CONF ${id}`, problem });
  }
  for (const m of text.matchAll(SEP)) {
    found.push({ index: m.index, cited: m[0], problem: idProblem(m[0]) });
  }
  for (const m of text.matchAll(OUTSIDE)) {
    const problem = `${m[0]} is a document outside the repository: cite ${RULES_DOCUMENT}`;
    found.push({ index: m.index, cited: m[0], problem });
  }
  // Stable, so a SEP's section citation stays before its bare id at the same offset.
  return found.sort((a, b) => a.index - b.index);
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i += 1) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.turbo', 'coverage']);

/** The .ts and .md files under `dir` (relative to root), build output and dependencies skipped. */
export function sourceFiles(root: string, dir: string): string[] {
  const files: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(join(root, path), { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(child);
      } else if (/\.(ts|md)$/.test(entry.name)) files.push(relative('.', child));
    }
  };
  walk(dir);
  return files.sort();
}

/** `file:line: problem` for every citation in `files` that the rule book does not define. */
export function undefinedCitations(root: string, files: string[], book: RuleBook): string[] {
  return files.flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    return citationsIn(text, book)
      .filter((c) => c.problem !== undefined)
      .map((c) => `${file}:${lineOf(text, c.index)}: ${c.problem}`);
  });
}
