/**
 * What V8's `--trace-gc-nvp` printed, as events: one line per collection, stamped with the ms
 * since the isolate started. Scavenges (`gc=s`) copy the young generation and promote what
 * survived twice; mark-compacts (`gc=mc`) collect the old generation.
 */
export interface GcEvent {
  /** Ms since the process's V8 isolate started. */
  atMs: number;
  kind: 'scavenge' | 'mark-compact' | 'other';
  pauseMs: number;
  /** Bytes allocated since the previous collection. */
  allocatedBytes: number;
  /** Bytes a scavenge moved to the old generation (0 for other kinds). */
  promotedBytes: number;
}

// Node 22 prints `[pid:0xisolate]`, Node 24 `[pid:0xisolate:thread]`.
const LINE = /^\[\d+:0x[0-9a-f]+(?::\d+)?\]\s+(\d+) ms: (.*)$/;
const KINDS: Record<string, GcEvent['kind']> = { s: 'scavenge', mc: 'mark-compact' };

/** Every collection in a process's output; other lines are skipped. */
export function parseGcTrace(output: string): GcEvent[] {
  const events: GcEvent[] = [];
  for (const line of output.split('\n')) {
    const match = LINE.exec(line.trim());
    if (match === null) continue;
    const fields = new Map(
      match[2]!.split(' ').map((pair): [string, string] => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
    );
    const gc = fields.get('gc');
    if (gc === undefined) continue;
    events.push({
      atMs: Number(match[1]),
      kind: KINDS[gc] ?? 'other',
      pauseMs: Number(fields.get('pause') ?? 0),
      allocatedBytes: Number(fields.get('allocated') ?? 0),
      promotedBytes: gc === 's' ? Number(fields.get('promoted') ?? 0) : 0,
    });
  }
  return events;
}

export interface GcSummary {
  scavenges: number;
  scavengePauseMs: number;
  maxScavengePauseMs: number;
  /** Of the bytes allocated, the share scavenges promoted: near 0 when requests leave nothing behind. */
  promotedShare: number;
  /** Each mark-compact's time (on the events' clock) and pause. */
  markCompacts: { atMs: number; pauseMs: number }[];
}

/** The collections of one window of `events` (atMs in [fromMs, toMs)). */
export function summarizeGc(events: readonly GcEvent[], fromMs: number, toMs: number): GcSummary {
  const inWindow = events.filter((event) => event.atMs >= fromMs && event.atMs < toMs);
  const scavenges = inWindow.filter((event) => event.kind === 'scavenge');
  const allocated = inWindow.reduce((sum, event) => sum + event.allocatedBytes, 0);
  const promoted = scavenges.reduce((sum, event) => sum + event.promotedBytes, 0);
  return {
    scavenges: scavenges.length,
    scavengePauseMs: scavenges.reduce((sum, event) => sum + event.pauseMs, 0),
    maxScavengePauseMs: Math.max(0, ...scavenges.map((event) => event.pauseMs)),
    promotedShare: allocated === 0 ? 0 : promoted / allocated,
    markCompacts: inWindow
      .filter((event) => event.kind === 'mark-compact')
      .map(({ atMs, pauseMs }) => ({ atMs, pauseMs })),
  };
}
