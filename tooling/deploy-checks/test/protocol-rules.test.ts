import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  RULES_DOCUMENT,
  citationsIn,
  readRuleBook,
  sourceFiles,
  undefinedCitations,
} from '../src/protocol-rules.js';
import { repoRoot } from '../src/repo.js';

const markdown = readFileSync(join(repoRoot, RULES_DOCUMENT), 'utf8');
const book = readRuleBook(markdown);

/** Where ids are cited: code, tests and docs, not dependencies or build output. */
const CITING_FILES = [
  ...['apps', 'packages', 'tooling', 'examples', 'scripts', 'docs'].flatMap((dir) =>
    sourceFiles(repoRoot, dir),
  ),
  'README.md',
  'ARCHITECTURE.md',
  'CHANGELOG.md',
].filter(
  // This file's own examples below cite undefined ids on purpose.
  (file) => file !== 'tooling/deploy-checks/test/protocol-rules.test.ts',
);

describe(RULES_DOCUMENT, () => {
  it('defines R1–R25 and C1–C47, each exactly once', () => {
    const numbered = [...book.ids].filter(([id]) => /^[RC]\d+$/.test(id));
    expect(numbered.filter(([, count]) => count > 1)).toEqual([]);
    expect(numbered.map(([id]) => id)).toEqual([
      ...Array.from({ length: 25 }, (_, i) => `R${i + 1}`),
      ...Array.from({ length: 47 }, (_, i) => `C${i + 1}`),
    ]);
  });

  it('names the sources of every rule', () => {
    const rules = markdown.split(/\n(?=- \*\*|#)/).filter((item) => /^- \*\*R\d+\.\*\*/.test(item));
    expect(rules).toHaveLength(25);
    const unsourced = rules
      .filter((rule) => !/_Sources:\s[\s\S]+\._\s*$/.test(rule))
      .map((rule) => rule.slice(0, 12));
    expect(unsourced).toEqual([]);
  });

  it('scans the code, tests and docs of every app and package', () => {
    expect(CITING_FILES).toEqual(
      expect.arrayContaining([
        'apps/gateway/src/mcp/tasks.ts',
        'apps/worker/README.md',
        'packages/protocol/src/routing-headers.ts',
        RULES_DOCUMENT,
      ]),
    );
    expect(CITING_FILES.some((file) => file.includes('node_modules/'))).toBe(false);
  });

  it('defines every id cited in the repository (file:line of any that is not)', () => {
    expect(undefinedCitations(repoRoot, CITING_FILES, book)).toEqual([]);
  });
});

describe('what counts as a citation', () => {
  const problems = (text: string) =>
    citationsIn(text, book)
      .map((c) => c.problem)
      .filter((problem) => problem !== undefined);

  it('accepts rules, ranges, checklist items, sections, conformance ids and SEPs defined here', () => {
    const text = [
      '/** One error for every unknown id (R15, C26); see R2–R4. */',
      '// BASIC §Error Codes; HTTP §Standard Request Headers; EXT §Streamable HTTP: Routing Headers.',
      '// (CONF tasks-headers-reject-mismatched-method), SEP-2663 §Backward Compatibility, SEP-2549',
    ].join('\n');
    expect(citationsIn(text, book).map((c) => c.cited)).toEqual([
      'R15',
      'C26',
      'R2',
      'R3',
      'R4',
      'BASIC §Error Codes',
      'HTTP §Standard Request Headers',
      'EXT §Streamable HTTP: Routing Headers',
      'CONF tasks-headers-reject-mismatched-method',
      'SEP-2663 §Backward Compatibility',
      'SEP-2663',
      'SEP-2549',
    ]);
    expect(problems(text)).toEqual([]);
  });

  it('follows a conformance id onto the next comment line', () => {
    expect(citationsIn('// checked by CONF\n// server-stateless too', book)[0]?.cited).toBe(
      'CONF server-stateless',
    );
  });

  it('names each id, section, check and document that is not defined here', () => {
    expect(
      problems(
        [
          'R26 and R24–R27; C48',
          'HTTP §SSE, NOPE §Anything',
          'CONF tasks-no-related-task-meta',
          'SEP-9999',
          'see SPEC-NOTES §3.3',
        ].join('\n'),
      ),
    ).toEqual([
      'R26 is not defined',
      'R26 is not defined',
      'R27 is not defined',
      'C48 is not defined',
      'HTTP §SSE: HTTP has no section "SSE" listed',
      'NOPE is not a source key',
      'CONF tasks-no-related-task-meta is not a listed scenario or check',
      'SEP-9999 is not defined',
      'SPEC-NOTES is not a source key',
      `SPEC-NOTES is a document outside the repository: cite ${RULES_DOCUMENT}`,
    ]);
  });

  it('does not read ids inside other words', () => {
    expect(citationsIn('tsk_R26x, AR2, R2D2, C3PO, RFC 6750 §3, JSON-RPC 2.0 §5', book)).toEqual(
      [],
    );
  });
});
