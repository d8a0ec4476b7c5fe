import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv as parseGatewayEnv } from '@mcp-tasks/gateway/env';
import { parseEnv as parseWorkerEnv } from '@mcp-tasks/worker/env';
import { describe, expect, it } from 'vitest';
import { ACCEPTED_NAMES, defaultOf, parsesAs } from '../src/app-env.js';
import { repoRoot } from '../src/repo.js';

function readExample(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of readFileSync(join(repoRoot, '.env.example'), 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!match?.[1]) throw new Error(`.env.example: not KEY=value: ${line}`);
    if (entries.has(match[1])) throw new Error(`.env.example: ${match[1]} listed twice`);
    entries.set(match[1], match[2] ?? '');
  }
  return entries;
}

/** Defaults that depend on the machine, so the example leaves them empty. */
const HOST_DEPENDENT = new Set(['WORKER_ID']);

function asText(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

describe('.env.example', () => {
  const example = readExample();
  const readers = (['gateway', 'worker'] as const).flatMap((role) =>
    ACCEPTED_NAMES[role].map((name) => ({ role, name })),
  );

  it('lists exactly the variables the two env parsers read', () => {
    expect([...example.keys()].sort()).toEqual([...new Set(readers.map((r) => r.name))].sort());
  });

  it.each(readers.map((r) => [`${r.role} ${r.name}`, r] as const))(
    '%s: the default, or a value the parser accepts',
    (_, { role, name }) => {
      const value = example.get(name) ?? '';
      const fallback = defaultOf(role, name);
      if (HOST_DEPENDENT.has(name)) expect(value).toBe('');
      else if (fallback === 'required') expect(parsesAs(role, name, value)).toBe(true);
      else if (fallback === undefined) {
        if (value !== '') expect(parsesAs(role, name, value)).toBe(true);
      } else expect(value).toBe(asText(fallback));
    },
  );

  it('is a configuration both apps start with', () => {
    const env = Object.fromEntries(example);
    const gateway = parseGatewayEnv(env);
    expect(gateway.ok ? [] : gateway.problems).toEqual([]);
    expect(() => parseWorkerEnv(env)).not.toThrow();
  });
});
