import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readHistory } from '../history/read-history.js';
import { createHistoryRecorder, type HistoryRecorder } from '../history/recorder.js';
import { createRng } from '../load/prng.js';
import { ChaosRoundError, runChaos, type ChaosContext, type ChaosPlan } from './plan.js';

/**
 * runChaos alone, with plans that touch no process: only what the loop itself does (phases,
 * rounds, a round that throws). The context has no processes, which these plans never ask for.
 */
let recorder: HistoryRecorder | undefined;
let historyPath = '';

async function contextFor(controller: AbortController): Promise<ChaosContext> {
  historyPath = join(await mkdtemp(join(tmpdir(), 'run-chaos-')), 'history.jsonl');
  recorder = createHistoryRecorder(historyPath);
  return {
    gateways: [],
    workers: [],
    servers: {},
    links: new Map(),
    recorder,
    rng: createRng(1),
    leaseMs: 2_000,
    busyWorkers: () => [],
    signal: controller.signal,
    onEvent: () => undefined,
  };
}

afterEach(async () => {
  await recorder?.close();
  recorder = undefined;
});

type RecordEvent = Parameters<ChaosPlan['round']>[1];

/** A plan whose round runs `body` (a throw in it is the round's rejection). */
const plan = (name: string, body: (ctx: ChaosContext, record: RecordEvent) => void): ChaosPlan => ({
  name,
  everyMs: 5,
  round: (ctx, record) => new Promise<void>((resolve) => resolve(body(ctx, record))),
});

describe('runChaos', () => {
  it('counts the rounds each plan began, and 0 for a plan whose phase never came', async () => {
    const controller = new AbortController();
    const ctx = await contextFor(controller);
    const rounds = await runChaos(
      [
        plan('first', (_ctx, record) => record('poke', 'nothing')),
        // The load ends during the second plan's first round: the third never gets a phase.
        plan('second', () => controller.abort()),
        plan('third', () => {
          throw new Error('never called');
        }),
      ],
      ctx,
      50,
    );
    expect(rounds.map((r) => r.plan)).toEqual(['first', 'second', 'third']);
    expect(rounds[0]!.rounds).toBeGreaterThan(0);
    expect(rounds.slice(1)).toEqual([
      { plan: 'second', rounds: 1 },
      { plan: 'third', rounds: 0 },
    ]);
    await recorder!.close();
    recorder = undefined;
    const events = (await readHistory(historyPath)).filter((r) => r.kind === 'chaos');
    expect(events).toHaveLength(rounds[0]!.rounds);
  });

  it('with passes, ends by itself once every plan had that many phases, one round at least', async () => {
    const controller = new AbortController();
    const ctx = await contextFor(controller);
    const rounds = await runChaos(
      [
        plan('first', (_ctx, record) => record('poke', 'a')),
        plan('second', (_ctx, record) => record('poke', 'b')),
      ],
      ctx,
      // Shorter than a round's pause: each phase is exactly its one round.
      1,
      2,
    );
    expect(controller.signal.aborted).toBe(false);
    expect(rounds).toEqual([
      { plan: 'first', rounds: 2 },
      { plan: 'second', rounds: 2 },
    ]);
    await recorder!.close();
    recorder = undefined;
    const events = (await readHistory(historyPath)).flatMap((r) =>
      r.kind === 'chaos' ? [r.target] : [],
    );
    expect(events).toEqual(['a', 'b', 'a', 'b']);
  });

  it('with passes, a lone plan runs one phase per pass, not an endless one', async () => {
    const controller = new AbortController();
    const ctx = await contextFor(controller);
    const rounds = await runChaos([plan('only', () => undefined)], ctx, 30, 1);
    expect(rounds[0]!.rounds).toBeGreaterThan(0);
    expect(controller.signal.aborted).toBe(false);
  });

  it('stops at a round that throws, naming the plan, the round and the error', async () => {
    const controller = new AbortController();
    const ctx = await contextFor(controller);
    let calls = 0;
    const failing = runChaos(
      [
        plan('breaks-on-second-round', () => {
          calls += 1;
          if (calls === 2) throw new Error('the node did not come back');
        }),
        plan('after', () => undefined),
      ],
      ctx,
      60_000,
    );
    const error = await failing.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ChaosRoundError);
    expect((error as ChaosRoundError).message).toBe(
      'chaos plan breaks-on-second-round failed in round 2: the node did not come back',
    );
    expect((error as ChaosRoundError).rounds).toEqual([
      { plan: 'breaks-on-second-round', rounds: 2 },
      { plan: 'after', rounds: 0 },
    ]);
    expect(calls).toBe(2);
    expect(controller.signal.aborted).toBe(false);
  });
});
