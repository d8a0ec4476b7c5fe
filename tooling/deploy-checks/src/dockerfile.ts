/** A Dockerfile as instructions: continuation lines joined, comments dropped. */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending === '') startLine = index + 1;
    if (line.startsWith('#')) return;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      return;
    }
    const full = `${pending}${line}`.trim();
    pending = '';
    const match = /^(\S+)\s*(.*)$/.exec(full);
    if (match?.[1])
      instructions.push({ keyword: match[1].toUpperCase(), args: match[2] ?? '', line: startLine });
  });
  return instructions;
}

/** COPY/ADD arguments: flags apart, then sources and the destination. */
export function copyParts(args: string): {
  flags: Record<string, string>;
  sources: string[];
  dest: string;
} {
  const words = args.split(/\s+/).filter((w) => w.length > 0);
  const flags: Record<string, string> = {};
  while (words[0]?.startsWith('--')) {
    const [name, value] = (words.shift() ?? '').slice(2).split('=');
    if (name) flags[name] = value ?? '';
  }
  const dest = words.pop() ?? '';
  return { flags, sources: words, dest };
}

/** The stages in order, by name (`FROM image AS name`). */
export function stageNames(instructions: Instruction[]): string[] {
  return instructions
    .filter((i) => i.keyword === 'FROM')
    .map((i) => /\bAS\s+(\S+)$/i.exec(i.args)?.[1] ?? '');
}
