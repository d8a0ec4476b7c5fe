import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCEPTED_NAMES, defaultOf } from '../src/app-env.js';
import { readmeEnvironment } from '../src/readme-env.js';
import { repoRoot } from '../src/repo.js';

/** Defaults that depend on the machine, so the README describes them instead of stating one. */
const HOST_DEPENDENT = new Set(['WORKER_ID']);
/** How a README says "no value": the variable is off or taken from elsewhere. */
const NO_VALUE = new Set(['unset', 'none', '—', '']);

function asText(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** Why a documented default disagrees with the parser's, or undefined when it agrees. */
function defaultMismatch(
  role: 'gateway' | 'worker',
  name: string,
  documented: string,
): string | undefined {
  const parsed = defaultOf(role, name);
  const text = documented.replace(/`/g, '').trim();
  if (HOST_DEPENDENT.has(name)) return undefined;
  if (parsed === 'required')
    return text.startsWith('required') ? undefined : `parsed as required, documented "${text}"`;
  // No default in the parser: the code that uses the value decides, and the README may say how
  // (REQUEST_STATE_SECRET is optional per field but required by a cross-field rule).
  if (parsed === undefined) return undefined;
  const expected = asText(parsed);
  if (expected === '' && NO_VALUE.has(text)) return undefined;
  return text === expected ? undefined : `parser default "${expected}", documented "${text}"`;
}

describe.each(['gateway', 'worker'] as const)('apps/%s/README.md environment table', (role) => {
  const readme = `apps/${role}/README.md`;
  const documented = readmeEnvironment(readFileSync(join(repoRoot, readme), 'utf8'));
  const names = documented.map((row) => row.name);

  it('documents every variable the env parser reads', () => {
    expect(ACCEPTED_NAMES[role].filter((name) => !names.includes(name))).toEqual([]);
  });

  it('documents only variables the env parser reads, each once', () => {
    expect(names.filter((name) => !ACCEPTED_NAMES[role].includes(name))).toEqual([]);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });

  it('states the default the parser applies', () => {
    const mismatches = documented
      .filter((row) => ACCEPTED_NAMES[role].includes(row.name))
      .map((row) => ({ row, problem: defaultMismatch(role, row.name, row.documentedDefault) }))
      .filter(({ problem }) => problem !== undefined)
      .map(({ row, problem }) => `${readme}:${row.line}: ${row.name}: ${problem}`);
    expect(mismatches).toEqual([]);
  });
});

describe('reading a README environment table', () => {
  it('splits a row naming several variables and their defaults', () => {
    const markdown = [
      '## Environment',
      '',
      '| variable | default | meaning |',
      '| --- | --- | --- |',
      '| `PORT` / `HOST` | `8080` / `0.0.0.0` | listen address |',
      '| `MCP_JWT_ISSUER` / `MCP_JWT_AUDIENCE` | see description | for `jwt` |',
      '',
      '## Shutdown',
      '| `NOT_IN_THE_TABLE` | 1 | after the section |',
    ].join('\n');
    expect(readmeEnvironment(markdown)).toEqual([
      { name: 'PORT', documentedDefault: '`8080`', line: 5 },
      { name: 'HOST', documentedDefault: '`0.0.0.0`', line: 5 },
      { name: 'MCP_JWT_ISSUER', documentedDefault: 'see description', line: 6 },
      { name: 'MCP_JWT_AUDIENCE', documentedDefault: 'see description', line: 6 },
    ]);
  });

  it('catches a wrong default and a required variable documented with a default', () => {
    expect(defaultMismatch('worker', 'LEASE_MS', '`3000`')).toBe(
      'parser default "30000", documented "3000"',
    );
    expect(defaultMismatch('gateway', 'DATABASE_URL', 'unset')).toBe(
      'parsed as required, documented "unset"',
    );
    expect(defaultMismatch('worker', 'MCP_TOOL_PACKS', '`reports`')).toBe(
      'parser default "reports,conformance", documented "reports"',
    );
  });
});
