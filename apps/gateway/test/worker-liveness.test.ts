import {
  FAST_WORKER_ENV,
  createTestRedis,
  freePort,
  launchProcess,
  type LaunchedProcess,
  type TestRedis,
} from '@mcp-tasks/testing';
import {
  TASK_QUEUE_NAME,
  createConsumerHeartbeatReader,
  type ConsumerHeartbeatReader,
} from '@mcp-tasks/queue';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchWorkerLiveness, type WorkerLiveness } from '../src/worker-liveness.js';
import { buildGateway, startInfrastructure, type Infrastructure } from './support/harness.js';

/**
 * A gateway and real worker processes on one Redis: workers on another REDIS_PREFIX consume
 * nothing of this gateway's, and it must say so once, and again when a worker arrives.
 */
const WINDOW_MS = 12_000; // above the worker's 5 s beat, with room for a loaded machine
const HINT =
  "no worker has consumed this gateway's queue within the window: workers must run with the same REDIS_PREFIX and REDIS_URL (the gateway log names them)";

let infra: Infrastructure;
let otherPrefix: TestRedis;
const workers: LaunchedProcess[] = [];
const readers: ConsumerHeartbeatReader[] = [];
const watchers: WorkerLiveness[] = [];

type LogLine = { level: number; msg: string } & Record<string, unknown>;

function watchedGateway(prefix: string) {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  const reader = createConsumerHeartbeatReader({ redis: { url: infra.redis.url }, prefix });
  readers.push(reader);
  const liveness = watchWorkerLiveness({
    reader,
    prefix,
    prefixIsDefault: false,
    queueName: TASK_QUEUE_NAME,
    redisSettingForLog: `REDIS_URL (${infra.redis.url})`,
    logger,
    windowMs: WINDOW_MS,
    intervalMs: 250,
  });
  watchers.push(liveness);
  liveness.start();
  const { app } = buildGateway(infra, { logger, workerLiveness: liveness });
  const warnings = () => lines.filter((line) => line.level === 40);
  const infos = () => lines.filter((line) => line.level === 30);
  const readyz = async () => {
    const response = await app.request('/readyz');
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { lines, warnings, infos, readyz };
}

async function startWorker(prefix: string): Promise<LaunchedProcess> {
  const metricsPort = await freePort();
  const worker = await launchProcess({
    entry: 'apps/worker/src/main.ts',
    env: {
      DATABASE_URL: infra.database.connectionString,
      REDIS_URL: infra.redis.url,
      REDIS_PREFIX: prefix,
      ...FAST_WORKER_ENV,
      METRICS_PORT: String(metricsPort),
      WORKER_ID: `liveness-${metricsPort}`,
    },
    readyUrl: `http://127.0.0.1:${metricsPort}/healthz`,
    readyTimeoutMs: 60_000,
  });
  workers.push(worker);
  return worker;
}

async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 45_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  infra = await startInfrastructure('gw_liveness');
  otherPrefix = await createTestRedis('gw_liveness_other');
}, 60_000);

afterAll(async () => {
  for (const watcher of watchers) watcher.stop();
  await Promise.allSettled(workers.map((worker) => worker.stop()));
  for (const reader of readers) reader.close();
  await otherPrefix?.deleteKeys();
  await infra?.close();
});

describe('a gateway watching for workers on its REDIS_PREFIX', () => {
  let lonely: ReturnType<typeof watchedGateway>;
  let served: ReturnType<typeof watchedGateway>;

  it('logs one line naming REDIS_PREFIX and what to do when its workers run on another prefix, and /readyz shows it while staying ready', async () => {
    await startWorker(otherPrefix.prefix);
    lonely = watchedGateway(infra.redis.prefix);
    served = watchedGateway(otherPrefix.prefix);

    await waitFor('the warning', () => lonely.warnings().length > 0);
    // Several more checks run (every 250 ms); none repeats the line.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(lonely.warnings()).toHaveLength(1);
    const [warning] = lonely.warnings();
    expect(warning).toMatchObject({
      redisPrefix: infra.redis.prefix,
      queue: TASK_QUEUE_NAME,
      lastSeenMsAgo: null,
    });
    expect(warning?.msg).toMatch(
      new RegExp(
        `^no worker has consumed queue "${TASK_QUEUE_NAME}" under REDIS_PREFIX=${infra.redis.prefix} since this gateway started \\d+ s ago \\(none recorded in the last 24 h\\); tasks wait until one does\\. Start a worker with the same REDIS_PREFIX \\(${infra.redis.prefix}\\) and REDIS_URL \\(redis://[^)]+\\) as this gateway$`,
      ),
    );

    expect(await lonely.readyz()).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { postgres: 'ok', redis: 'ok' },
        workers: { status: 'none_recent', windowMs: WINDOW_MS, lastSeenMsAgo: null, hint: HINT },
      },
    });
  }, 120_000);

  it('says nothing when a worker consumes its prefix, and /readyz counts that worker', async () => {
    // `served` has watched for longer than the window by now, its worker beating throughout.
    expect(served.warnings()).toEqual([]);
    expect(await served.readyz()).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { postgres: 'ok', redis: 'ok' },
        workers: { status: 'consuming', consumers: 1, lastSeenMsAgo: expect.any(Number) as number },
      },
    });
  });

  it('logs the recovery once a worker starts on its prefix', async () => {
    await startWorker(infra.redis.prefix);
    await waitFor('the recovery line', () =>
      lonely.infos().some((line) => line.msg.startsWith('a worker consumes')),
    );
    const recoveries = lonely.infos().filter((line) => line.msg.startsWith('a worker consumes'));
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]?.msg).toMatch(
      new RegExp(
        `^a worker consumes queue "${TASK_QUEUE_NAME}" under REDIS_PREFIX=${infra.redis.prefix} again, after \\d+ s without one$`,
      ),
    );
    expect(lonely.warnings()).toHaveLength(1);
    expect((await lonely.readyz()).body.workers).toEqual({
      status: 'consuming',
      consumers: 1,
      lastSeenMsAgo: expect.any(Number) as number,
    });
  }, 120_000);

  it('says for how long once the workers of a prefix that had some are gone', async () => {
    await workers[0]?.stop();
    await waitFor('the warning', () => served.warnings().length > 0);
    expect(served.warnings()).toHaveLength(1);
    const [warning] = served.warnings();
    expect(warning?.lastSeenMsAgo).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(warning?.msg).toMatch(
      new RegExp(
        `^no worker has consumed queue "${TASK_QUEUE_NAME}" under REDIS_PREFIX=${otherPrefix.prefix} for \\d+ s; tasks wait until one does\\. Start a worker`,
      ),
    );
    expect((await served.readyz()).body.workers).toEqual({
      status: 'none_recent',
      windowMs: WINDOW_MS,
      lastSeenMsAgo: expect.any(Number) as number,
      hint: HINT,
    });
  }, 60_000);
});
