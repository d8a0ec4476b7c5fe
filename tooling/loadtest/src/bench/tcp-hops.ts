import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * Where a line's messages go, hop by hop (issue 30): the TCP segments each established socket
 * on this machine sent in a window, from `ss -tinp`, summed by who sent them to whom
 * (client → gateway, worker → postgres, postgres → worker, …). On these VMs a message costs its
 * sender a system call and wakes its reader, so this is the budget a lifecycle spends. `ss`
 * shows only open sockets, so the window is sampled (openSegmentMeter) and a connection closed
 * between samples loses what it sent after the last one (SegmentLedger). Sockets are told apart
 * by their ports alone: every hop of a stack on this machine is loopback.
 */

/** One established socket as `ss -tinp` shows it. */
export interface SocketSegments {
  localPort: number;
  peerPort: number;
  /** The owning process, when ss could see it. */
  pid: number | undefined;
  /** All segments sent, bare ACKs included, and those that carried data. */
  segments: number;
  dataSegments: number;
}

/**
 * Parses `ss -tinpH` output: a line per socket (its state first, unless a state filter left it
 * out), its TCP info on the next, indented, line.
 */
export function parseSs(text: string): SocketSegments[] {
  const sockets: SocketSegments[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const head = /^(?:[A-Z-]+\s+)?\d+\s+\d+\s+\S+:(\d+)\s+\S+:(\d+)\s*(.*)$/.exec(lines[index]!);
    if (head === null) continue;
    const info = lines[index + 1] ?? '';
    if (!/^\s/.test(info)) continue;
    index += 1;
    const number = (name: string) => Number(new RegExp(`\\b${name}:(\\d+)`).exec(info)?.[1] ?? 0);
    const pid = /pid=(\d+)/.exec(head[3]!)?.[1];
    sockets.push({
      localPort: Number(head[1]),
      peerPort: Number(head[2]),
      pid: pid === undefined ? undefined : Number(pid),
      segments: number('segs_out'),
      dataSegments: number('data_segs_out'),
    });
  }
  return sockets;
}

/** Every established TCP socket of this machine (its network namespace), now. */
export async function snapshotSockets(): Promise<SocketSegments[]> {
  const { stdout } = await execFileAsync('ss', ['-tinpH', 'state', 'established']);
  return parseSs(stdout);
}

export interface HopSegments {
  hop: string;
  segments: number;
  dataSegments: number;
}

/** One connection's sending end over the window: its counts when first seen and when last seen. */
interface Life {
  pid: number | undefined;
  first: { segments: number; dataSegments: number };
  last: { segments: number; dataSegments: number };
}

/**
 * Folds snapshots taken through a window into what each connection sent in it. Sockets in the
 * first snapshot count from there; one that appears later counts from zero (opened since); one
 * whose counts fall was closed and its ports reused, so a new life starts. A connection closed
 * between two snapshots keeps what the last one saw: sample often enough for short ones.
 */
export class SegmentLedger {
  readonly #lives = new Map<string, Life[]>();
  #started = false;

  add(snapshot: readonly SocketSegments[]): void {
    for (const socket of snapshot) {
      const key = `${socket.localPort}>${socket.peerPort}`;
      const lives = this.#lives.get(key) ?? [];
      const current = lives.at(-1);
      const counts = { segments: socket.segments, dataSegments: socket.dataSegments };
      if (current === undefined || socket.segments < current.last.segments) {
        const first = this.#started ? { segments: 0, dataSegments: 0 } : counts;
        lives.push({ pid: socket.pid, first, last: counts });
        this.#lives.set(key, lives);
      } else {
        current.last = counts;
        current.pid ??= socket.pid;
      }
    }
    this.#started = true;
  }

  /**
   * Sent segments by hop, largest first. `roleOf` names a process (by pid) or says it is none of
   * the line's; a connection whose sender or receiver (the socket with the ports swapped, both
   * ends being on this machine) has no role is left out.
   */
  byHop(roleOf: (pid: number) => string | undefined): HopSegments[] {
    const hops = new Map<string, HopSegments>();
    const ownerOf = (key: string) => {
      const pid = this.#lives.get(key)?.find((life) => life.pid !== undefined)?.pid;
      return pid === undefined ? undefined : roleOf(pid);
    };
    for (const [key, lives] of this.#lives) {
      const [local, peer] = key.split('>');
      const from = ownerOf(key);
      const to = ownerOf(`${peer}>${local}`);
      if (from === undefined || to === undefined) continue;
      const hop = `${from} → ${to}`;
      const sum = hops.get(hop) ?? { hop, segments: 0, dataSegments: 0 };
      for (const life of lives) {
        sum.segments += life.last.segments - life.first.segments;
        sum.dataSegments += life.last.dataSegments - life.first.dataSegments;
      }
      hops.set(hop, sum);
    }
    return [...hops.values()].filter((h) => h.segments > 0).sort((a, b) => b.segments - a.segments);
  }
}

/**
 * Samples the machine's sockets every `intervalMs` from now until `stop()`, which resolves with
 * the ledger (one more snapshot taken then). A sample runs `ss` as a child process.
 */
export async function openSegmentMeter(intervalMs = 200) {
  const ledger = new SegmentLedger();
  ledger.add(await snapshotSockets());
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(async () => ledger.add(await snapshotSockets()));
  }, intervalMs);
  return {
    async stop(): Promise<SegmentLedger> {
      clearInterval(timer);
      await sampling;
      ledger.add(await snapshotSockets());
      return ledger;
    },
  };
}

/**
 * SegmentLedger.byHop's roleOf for a stack: the named processes first (gateway, worker, probe), then
 * any Postgres or Redis process by its command name; everything else on the machine is none.
 */
export function stackRoles(
  named: Record<string, readonly number[]>,
): (pid: number) => string | undefined {
  const roles = new Map<number, string | undefined>();
  for (const [role, pids] of Object.entries(named)) for (const pid of pids) roles.set(pid, role);
  const byName: Record<string, string> = { postgres: 'postgres', 'redis-server': 'redis' };
  return (pid) => {
    if (!roles.has(pid)) {
      let name: string | undefined;
      try {
        name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        // Gone: none of the line's now.
      }
      roles.set(pid, name === undefined ? undefined : byName[name]);
    }
    return roles.get(pid);
  };
}

/**
 * One line of the probes' output: each hop's data and all segments per `unit` (a task, a
 * lifecycle) over `count` of them, largest first, and the totals.
 */
export function describeHops(hops: readonly HopSegments[], count: number, unit: string): string {
  const per = (n: number) => (n / count).toFixed(2);
  const data = hops.reduce((sum, h) => sum + h.dataSegments, 0);
  const all = hops.reduce((sum, h) => sum + h.segments, 0);
  const each = hops.map((h) => `${h.hop} ${per(h.dataSegments)} / ${per(h.segments)}`).join(', ');
  return `TCP segments per ${unit} by hop (with data / all; the probe's are its clients' and watcher's): ${each}; total ${per(data)} / ${per(all)}`;
}
