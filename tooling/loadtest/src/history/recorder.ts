import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { historyNow } from './clock.js';
import type {
  ChaosRecord,
  ChaosRoundsRecord,
  EffectsRecord,
  FinalReadRecord,
  HistoryRecord,
  InterruptedRecord,
  NotificationRecord,
  ReplyRecord,
  RequestRecord,
  RunRecord,
  StepRecord,
} from './records.js';

type Fields<R> = Omit<R, 'kind' | 't' | 'op'>;

export interface HistoryRecorder {
  run(fields: Fields<RunRecord>): void;
  /** Records a request and returns its `op`, to pass to `reply`. */
  request(fields: Fields<RequestRecord>): number;
  reply(op: number, fields: Fields<ReplyRecord>): void;
  /** A snapshot pushed on the stream that request `op` (subscriptions/listen) opened. */
  notification(op: number, fields: Fields<NotificationRecord>): void;
  chaos(fields: Fields<ChaosRecord>): void;
  /** Once the chaos stopped: the rounds each plan began. */
  chaosRounds(fields: Fields<ChaosRoundsRecord>): void;
  /** Step lines come with their own times (from the worker's log). */
  step(record: Omit<StepRecord, 'kind'>): void;
  final(fields: Fields<FinalReadRecord>): void;
  effects(fields: Fields<EffectsRecord>): void;
  /** The run was stopped early (now): what was running is cut short. */
  interrupted(fields: Fields<InterruptedRecord>): void;
  /** Records written so far. */
  count(): number;
  /** Flushes and closes the file. */
  close(): Promise<void>;
}

/** Lines are batched and written once per event-loop turn (or per ~64 KiB), not one write each. */
const FLUSH_BYTES = 64 * 1024;

export function createHistoryRecorder(path: string): HistoryRecorder {
  const stream: WriteStream = createWriteStream(path, { flags: 'w' });
  let pending: string[] = [];
  let pendingBytes = 0;
  let scheduled = false;
  let written = 0;
  let nextOp = 0;
  let failure: Error | undefined;
  stream.on('error', (error) => (failure = error));

  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    stream.write(pending.join(''));
    pending = [];
    pendingBytes = 0;
  };

  const write = (record: HistoryRecord): void => {
    if (failure) throw failure;
    const line = `${JSON.stringify(record)}\n`;
    pending.push(line);
    pendingBytes += line.length;
    written += 1;
    if (pendingBytes >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  return {
    run: (fields) => write({ kind: 'run', t: historyNow(), ...fields }),
    request(fields) {
      const op = nextOp++;
      write({ kind: 'request', t: historyNow(), op, ...fields });
      return op;
    },
    reply: (op, fields) => write({ kind: 'reply', t: historyNow(), op, ...fields }),
    notification: (op, fields) => write({ kind: 'notification', t: historyNow(), op, ...fields }),
    chaos: (fields) => write({ kind: 'chaos', t: historyNow(), ...fields }),
    chaosRounds: (fields) => write({ kind: 'chaos-rounds', t: historyNow(), ...fields }),
    step: (record) => write({ kind: 'step', ...record }),
    final: (fields) => write({ kind: 'final', t: historyNow(), ...fields }),
    effects: (fields) => write({ kind: 'effects', t: historyNow(), ...fields }),
    interrupted: (fields) => write({ kind: 'interrupted', t: historyNow(), ...fields }),
    count: () => written,
    async close() {
      flush();
      stream.end();
      await once(stream, 'finish');
      if (failure) throw failure;
    },
  };
}
