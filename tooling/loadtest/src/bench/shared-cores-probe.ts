/**
 * Is issue 30's scale-out tax the replicas' or the machine's? In turns, ROUNDS times: one 1 + 1
 * stack with 2C clients; one 2 + 2 stack with 2C clients; and two independent 1 + 1 stacks (each
 * its own database and Redis prefix, nothing shared but the machine) with C clients each, run at
 * once. The last one has as many processes on the cores and as much load per process as the
 * 2 + 2, but its replicas know nothing of each other: if it costs what the 2 + 2 costs per task,
 * the tax comes from sharing the cores, not from coupling between replicas. Prints tasks/s, CPU
 * ms per task and main-thread sleeps / preemptions per task (end-to-end.ts) for each shape.
 *
 *   CLIENTS=16 ROUNDS=2 DURATION_S=8 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/shared-cores-probe.ts
 */
import { postgresBaseUrl } from '@mcp-tasks/testing';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { deleteRedisPrefix } from './cleanup.js';
import { runEndToEnd, type EndToEndResult } from './end-to-end.js';
import { createScratch } from './probe-stack.js';

const clients = Number(process.env.CLIENTS ?? 16);
const rounds = Number(process.env.ROUNDS ?? 2);
const durationS = Number(process.env.DURATION_S ?? 8);
const warmupS = Number(process.env.WARMUP_S ?? 2);

type Side = Awaited<ReturnType<typeof createScratch>>;

const statsUrl = await postgresBaseUrl();
const sides = [await createScratch('cores_a'), await createScratch('cores_b')];

const start = (s: Side, gateways: number, workers: number) =>
  startBenchStack({
    databaseUrl: s.database.connectionString,
    redisUrl: s.redis.url,
    redisPrefix: s.redis.prefix,
    gateways,
    workers,
    workerConcurrency: 2 * clients,
  });

const measure = (s: Side, stack: BenchStack, concurrency: number) =>
  runEndToEnd({
    stack,
    databaseUrl: s.database.connectionString,
    statsUrl,
    databaseName: s.database.name,
    redisUrl: s.redis.url,
    concurrency,
    durationS,
    warmupS,
  });

const line = (label: string, xs: EndToEndResult[]) => {
  const tasks = xs.reduce((sum, x) => sum + x.tasks, 0);
  // Per task over all stacks of the shape: each stack's per-task figure weighted by its tasks.
  const per = (pick: (x: EndToEndResult) => number) =>
    xs.reduce((sum, x) => sum + pick(x) * x.tasks, 0) / tasks;
  const rate = xs.reduce((sum, x) => sum + x.tasksPerS, 0);
  console.log(
    `${label.padEnd(34)} ${rate.toFixed(1).padStart(7)} tasks/s; CPU ms/task gateway ${per((x) => x.gatewayCpuMsPerTask).toFixed(2)} / worker ${per((x) => x.workerCpuMsPerTask).toFixed(2)}; sleeps / preemptions per task gateway ${per((x) => x.gatewaySwitchesPerTask.sleeps).toFixed(2)} / ${per((x) => x.gatewaySwitchesPerTask.preempted).toFixed(2)}, worker ${per((x) => x.workerSwitchesPerTask.sleeps).toFixed(2)} / ${per((x) => x.workerSwitchesPerTask.preempted).toFixed(2)}`,
  );
};

try {
  for (let round = 1; round <= rounds; round += 1) {
    console.log(`round ${round}`);
    const one = await start(sides[0]!, 1, 1);
    try {
      line(`1+1, ${2 * clients} clients`, [await measure(sides[0]!, one, 2 * clients)]);
    } finally {
      await one.stop();
    }
    const scaled = await start(sides[0]!, 2, 2);
    try {
      line(`2+2, ${2 * clients} clients`, [await measure(sides[0]!, scaled, 2 * clients)]);
    } finally {
      await scaled.stop();
    }
    const twins = [await start(sides[0]!, 1, 1), await start(sides[1]!, 1, 1)];
    try {
      const results = await Promise.all(
        twins.map((stack, index) => measure(sides[index]!, stack, clients)),
      );
      line(`two 1+1 at once, ${clients} clients each`, results);
    } finally {
      await Promise.all(twins.map((stack) => stack.stop()));
    }
  }
} finally {
  for (const s of sides) {
    await deleteRedisPrefix(s.redis.url, s.redis.prefix);
    await s.database.drop();
  }
}
