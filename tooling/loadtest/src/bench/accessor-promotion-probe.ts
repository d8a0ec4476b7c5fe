/**
 * Why the gateway may not build an object literal with a getter per request (eslint.config.js):
 * the same request-shaped work three ways, each in its own process under `--trace-gc-nvp`, and
 * the share of allocated bytes its scavenges promoted. Each "request" builds a graph of 200
 * small objects, reachable from a closure, and lets go of it 2 ms later.
 *
 *   - `getter-literal`: the closure behind `{ get size() { ... }, run() { ... } }`;
 *   - `plain-literal`: the same literal without the getter;
 *   - `class`: a class instance with the getter on its prototype.
 *
 *   pnpm exec tsx tooling/loadtest/src/bench/accessor-promotion-probe.ts
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseGcTrace, summarizeGc } from './gc-trace.js';

const MODES = ['getter-literal', 'plain-literal', 'class'] as const;
type Mode = (typeof MODES)[number];
const REQUESTS = 6_000;

class Holder {
  constructor(private readonly size: () => number) {}
  get length(): number {
    return this.size();
  }
  run(): number {
    return this.size();
  }
}

function wrap(mode: Mode, size: () => number): { readonly length: unknown; run(): number } {
  if (mode === 'class') return new Holder(size);
  if (mode === 'plain-literal') return { length: size, run: () => size() };
  return {
    // The shape the lint rule forbids, on purpose: this is the measurement of why.
    // eslint-disable-next-line no-restricted-syntax
    get length() {
      return size();
    },
    run: () => size(),
  };
}

async function workload(mode: Mode): Promise<void> {
  let kept = 0;
  for (let i = 0; i < REQUESTS; i += 1) {
    const graph = Array.from({ length: 200 }, (_, j) => ({ j, label: `item ${j} of ${i}` }));
    const request = wrap(mode, () => graph.length);
    setTimeout(() => (kept += request.run()), 2);
    if (i % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setTimeout(resolve, 10));
  if (kept !== REQUESTS * 200) throw new Error(`lost requests: ${kept}`);
}

const mode = process.argv[2] as Mode | undefined;
if (mode !== undefined) {
  await workload(mode);
} else {
  const self = fileURLToPath(import.meta.url);
  for (const each of MODES) {
    const child = spawnSync(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', self, each], {
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`${each} failed:\n${child.stderr}`);
    const gc = summarizeGc(parseGcTrace(child.stdout), 0, Number.POSITIVE_INFINITY);
    console.log(
      `${each}: ${gc.scavenges} scavenges, ${gc.scavengePauseMs.toFixed(0)} ms paused, ${(gc.promotedShare * 100).toFixed(1)}% of allocated bytes promoted`,
    );
  }
}
