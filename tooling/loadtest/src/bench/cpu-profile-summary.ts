import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where a process's CPU went, from the V8 profile `pnpm bench --cpu-prof DIR` leaves behind:
 * busy time split into coarse kinds (socket writes, GC, pg, Redis/BullMQ, ...) by each sample's
 * own frame, and the functions with the most self time. Syscalls are expensive on small VMs, so
 * "socket writes" (native writev/write frames) is its own kind: it is often the largest.
 */

/** The subset of a `.cpuprofile` this reads (Chrome DevTools' Profile format). */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface CpuProfileSummary {
  /** Sampled time, idle included. */
  totalMs: number;
  /** Sampled time minus `(idle)`. */
  busyMs: number;
  /** Busy time by kind, largest first; shares are of busyMs. */
  kinds: { kind: string; ms: number; share: number }[];
  /** Functions by self time, largest first; shares are of busyMs. */
  topSelf: { frame: string; ms: number; share: number }[];
}

const SOCKET_WRITE_FRAMES = new Set([
  'writev',
  'writeBuffer',
  'writeUtf8String',
  'writeLatin1String',
]);

/** The kind a sample's own (leaf) frame belongs to. */
export function kindOf(frame: { functionName: string; url: string }): string {
  const { functionName, url } = frame;
  if (url === '') {
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(garbage collector)') return 'GC';
    if (SOCKET_WRITE_FRAMES.has(functionName)) return 'socket writes';
    return 'native (other)';
  }
  if (/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(pg|pg-pool|pg-protocol|kysely)\//.test(url))
    return 'pg + Kysely';
  if (/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(ioredis|bullmq)\//.test(url))
    return 'ioredis + BullMQ';
  if (/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(hono|@hono)\//.test(url)) return 'Hono';
  if (url.includes('node_modules/')) return 'other libraries';
  if (url.startsWith('node:')) return 'Node internals';
  return 'mcp-tasks';
}

function frameLabel(frame: { functionName: string; url: string; lineNumber: number }): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const short = frame.url.replace(/^.*\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '');
  return `${name} ${short.replace(/^file:\/\/.*?\/(apps|packages)\//, '$1/')}:${frame.lineNumber + 1}`;
}

export function summarizeCpuProfile(profile: CpuProfile, top = 10): CpuProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((nodeId, i) => {
    selfUs.set(nodeId, (selfUs.get(nodeId) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  let totalUs = 0;
  let idleUs = 0;
  const kinds = new Map<string, number>();
  const frames = new Map<string, number>();
  for (const [nodeId, us] of selfUs) {
    const frame = byId.get(nodeId)!.callFrame;
    totalUs += us;
    const kind = kindOf(frame);
    if (kind === 'idle') {
      idleUs += us;
      continue;
    }
    kinds.set(kind, (kinds.get(kind) ?? 0) + us);
    const label = frameLabel(frame);
    frames.set(label, (frames.get(label) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const ranked = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({
        name,
        ms: us / 1_000,
        share: busyUs === 0 ? 0 : us / busyUs,
      }));
  return {
    totalMs: totalUs / 1_000,
    busyMs: busyUs / 1_000,
    kinds: ranked(kinds).map(({ name, ms, share }) => ({ kind: name, ms, share })),
    topSelf: ranked(frames)
      .slice(0, top)
      .map(({ name, ms, share }) => ({ frame: name, ms, share })),
  };
}

/** A few lines per process: busy time, its kinds, and the top functions by self time. */
export function renderCpuProfileSummary(label: string, summary: CpuProfileSummary): string {
  const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
  return [
    `${label}: busy ${summary.busyMs.toFixed(0)} of ${summary.totalMs.toFixed(0)} ms sampled`,
    `  by kind: ${summary.kinds.map((k) => `${k.kind} ${percent(k.share)}`).join(', ')}`,
    '  top self time:',
    ...summary.topSelf.map((f) => `    ${percent(f.share).padStart(6)}  ${f.frame}`),
  ].join('\n');
}

/**
 * Every `.cpuprofile` in `dir` (node names them CPU.<date>.<time>.<pid>.<thread>.<seq>), each
 * under the label its pid has in `labels` (or its pid), rendered one after another.
 */
export async function renderCpuProfileDir(
  dir: string,
  labels: ReadonlyMap<number, string>,
): Promise<string> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile')).sort();
  const rendered: string[] = [];
  for (const name of files) {
    const pid = Number(/^CPU\.\d+\.\d+\.(\d+)\./.exec(name)?.[1]);
    const profile = JSON.parse(await readFile(join(dir, name), 'utf8')) as CpuProfile;
    rendered.push(
      renderCpuProfileSummary(
        `${labels.get(pid) ?? `pid ${pid}`} (${name})`,
        summarizeCpuProfile(profile),
      ),
    );
  }
  return rendered.join('\n');
}
