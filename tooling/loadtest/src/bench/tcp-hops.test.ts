import { describe, expect, it } from 'vitest';
import { describeHops, parseSs, SegmentLedger } from './tcp-hops.js';

/** Two lines per socket, as `ss -tinpH state established` prints them (no state column). */
const ss = (
  sockets: { local: number; peer: number; pid?: number; segs: number; data: number }[],
): string =>
  sockets
    .map(
      ({ local, peer, pid, segs, data }) =>
        `0      0      127.0.0.1:${local}  127.0.0.1:${peer} ${pid === undefined ? '' : `users:(("node",pid=${pid},fd=21))`}\n` +
        `\t cubic wscale:7,7 rto:204 rtt:0.02/0.01 mss:32768 bytes_sent:9 segs_out:${segs} segs_in:3 data_segs_out:${data} data_segs_in:1 lastsnd:4`,
    )
    .join('\n');

describe('parseSs', () => {
  it('reads ports, owner and sent segments, with or without the state column', () => {
    const text =
      'ESTAB 0 0 127.0.0.1:5432 127.0.0.1:40000 users:(("postgres",pid=77,fd=9))\n' +
      '\t bbr rto:204 segs_out:12 segs_in:9 data_segs_out:10 data_segs_in:8\n' +
      ss([{ local: 40000, peer: 5432, segs: 9, data: 8 }]);
    expect(parseSs(text)).toEqual([
      { localPort: 5432, peerPort: 40000, pid: 77, segments: 12, dataSegments: 10 },
      { localPort: 40000, peerPort: 5432, pid: undefined, segments: 9, dataSegments: 8 },
    ]);
  });
});

describe('SegmentLedger', () => {
  const roles = new Map([
    [1, 'client'],
    [2, 'gateway'],
    [3, 'postgres'],
  ]);
  const roleOf = (pid: number) => roles.get(pid);
  const ledgerOf = (...snapshots: string[]) => {
    const ledger = new SegmentLedger();
    for (const snapshot of snapshots) ledger.add(parseSs(snapshot));
    return ledger;
  };

  it('sums what each end sent in the window by sender and receiver, largest first', () => {
    const ledger = ledgerOf(
      ss([
        { local: 50000, peer: 8080, pid: 1, segs: 10, data: 5 },
        { local: 8080, peer: 50000, pid: 2, segs: 10, data: 10 },
        { local: 50001, peer: 5432, pid: 2, segs: 4, data: 4 },
        { local: 5432, peer: 50001, pid: 3, segs: 4, data: 4 },
      ]),
      ss([
        { local: 50000, peer: 8080, pid: 1, segs: 16, data: 8 },
        { local: 8080, peer: 50000, pid: 2, segs: 14, data: 14 },
        { local: 50001, peer: 5432, pid: 2, segs: 7, data: 6 },
        { local: 5432, peer: 50001, pid: 3, segs: 6, data: 6 },
        // Opened during the window: all it sent, it sent since the first snapshot.
        { local: 50002, peer: 8080, pid: 1, segs: 3, data: 1 },
        { local: 8080, peer: 50002, pid: 2, segs: 3, data: 2 },
      ]),
    );
    expect(ledger.byHop(roleOf)).toEqual([
      { hop: 'client → gateway', segments: 9, dataSegments: 4 },
      { hop: 'gateway → client', segments: 7, dataSegments: 6 },
      { hop: 'gateway → postgres', segments: 3, dataSegments: 2 },
      { hop: 'postgres → gateway', segments: 2, dataSegments: 2 },
    ]);
  });

  it('keeps what a connection closed in the window sent until its last sample, and a reused port as a new life', () => {
    const ledger = ledgerOf(
      ss([
        { local: 50001, peer: 5432, pid: 2, segs: 40, data: 30 },
        { local: 5432, peer: 50001, pid: 3, segs: 40, data: 30 },
      ]),
      ss([
        { local: 50001, peer: 5432, pid: 2, segs: 45, data: 33 },
        { local: 5432, peer: 50001, pid: 3, segs: 44, data: 33 },
        { local: 50002, peer: 8080, pid: 1, segs: 4, data: 2 },
        { local: 8080, peer: 50002, pid: 2, segs: 5, data: 5 },
      ]),
      // 50002 closed; 50001 closed and its ports taken by a new connection.
      ss([
        { local: 50001, peer: 5432, pid: 2, segs: 2, data: 1 },
        { local: 5432, peer: 50001, pid: 3, segs: 3, data: 2 },
      ]),
    );
    expect(ledger.byHop(roleOf)).toEqual([
      { hop: 'gateway → postgres', segments: 7, dataSegments: 4 },
      { hop: 'postgres → gateway', segments: 7, dataSegments: 5 },
      { hop: 'gateway → client', segments: 5, dataSegments: 5 },
      { hop: 'client → gateway', segments: 4, dataSegments: 2 },
    ]);
  });

  it("leaves out connections with a process that is not the line's at either end", () => {
    const ledger = ledgerOf(
      ss([
        { local: 50000, peer: 6000, pid: 1, segs: 1, data: 1 },
        { local: 6000, peer: 50000, pid: 99, segs: 1, data: 1 },
      ]),
      ss([
        { local: 50000, peer: 6000, pid: 1, segs: 5, data: 5 },
        { local: 6000, peer: 50000, pid: 99, segs: 5, data: 5 },
      ]),
    );
    expect(ledger.byHop(roleOf)).toEqual([]);
  });
});

describe('describeHops', () => {
  it('prints each hop and the totals per unit, data segments first', () => {
    const hops = [
      { hop: 'client → gateway', segments: 9, dataSegments: 4 },
      { hop: 'gateway → client', segments: 7, dataSegments: 6 },
    ];
    expect(describeHops(hops, 2, 'task')).toBe(
      "TCP segments per task by hop (with data / all; the probe's are its clients' and watcher's): " +
        'client → gateway 2.00 / 4.50, gateway → client 3.00 / 3.50; total 5.00 / 8.00',
    );
  });
});
