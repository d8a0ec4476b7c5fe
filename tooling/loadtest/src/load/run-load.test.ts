import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBaseUrl, redisBaseUrl } from '@mcp-tasks/testing';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChaosPlan } from '../chaos/plan.js';
import { readHistory } from '../history/read-history.js';
import { ChaosFailedError, runLoad } from './run-load.js';

/** A running process's environment variable, read from /proc (the harness runs on Linux). */
async function envOf(pid: number, name: string): Promise<string | undefined> {
  const entries = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
  return entries.find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1);
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a run whose chaos round throws', () => {
  beforeAll(async () => {
    process.env.DATABASE_URL ??= await postgresBaseUrl();
    process.env.REDIS_URL ??= await redisBaseUrl();
  });

  it('stops the load at once, tears the stack down, writes the history and names the plan and the error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loadtest-chaos-fails-'));
    const pids: number[] = [];
    let rounds = 0;
    let redisPrefix: string | undefined;
    const breaks: ChaosPlan = {
      name: 'breaks-in-round-2',
      everyMs: 1_000,
      async round(ctx, record) {
        rounds += 1;
        for (const p of [...ctx.gateways, ...ctx.workers])
          if (p.pid !== undefined) pids.push(p.pid);
        redisPrefix ??= await envOf(ctx.workers[0]!.pid!, 'REDIS_PREFIX');
        record(rounds === 1 ? 'poke' : 'about-to-fail', 'nothing');
        if (rounds === 2) throw new Error('the node did not come back');
      },
    };
    const failure = await runLoad({
      // Far more than a few seconds of load: only the failure can end the run this early.
      tasks: 400,
      durationMs: 60_000,
      concurrency: 2,
      gateways: 1,
      workers: 1,
      chaos: [breaks],
      chaosPhaseMs: 60_000,
      seed: 3,
      taskBoundMs: 60_000,
      leaseMs: 2_000,
      dir,
      log: () => undefined,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const historyPath = join(dir, 'history.jsonl');
    expect(failure).toBeInstanceOf(ChaosFailedError);
    expect((failure as Error).message).toBe(
      `chaos plan breaks-in-round-2 failed in round 2: the node did not come back; the load stopped early; history: ${historyPath}`,
    );
    expect(rounds).toBe(2);

    // Torn down: the gateway and worker processes the plan saw are gone.
    expect(pids.length).toBeGreaterThanOrEqual(2);
    expect(pids.filter(isAlive)).toEqual([]);
    // And the queue's keys on the shared Redis went with it.
    expect(redisPrefix).toMatch(/^mcpt-loadtest-/);
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      expect(await redis.keys(`${redisPrefix}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }

    // The history is written, up to the failure and the rounds record after it.
    const records = await readHistory(historyPath);
    expect(records[0]?.kind).toBe('run');
    const chaos = records.flatMap((r) => (r.kind === 'chaos' ? [r] : []));
    expect(chaos.map((r) => r.action)).toEqual(['poke', 'about-to-fail']);
    expect(records.filter((r) => r.kind === 'chaos-rounds')).toMatchObject([
      { plans: [{ plan: 'breaks-in-round-2', rounds: 2 }] },
    ]);
    // No lifecycle began after the failure: at most the creates already on their way (one per client).
    const failedAt = chaos[1]!.t;
    const createsAfter = records.filter(
      (r) => r.kind === 'request' && r.method === 'tools/call' && r.t > failedAt,
    );
    expect(createsAfter.length).toBeLessThanOrEqual(2);
    // Nor were the final reads made: the run stopped.
    expect(records.some((r) => r.kind === 'final')).toBe(false);
  }, 120_000);
});
