import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import {
  createTestDatabase,
  createTestRedis,
  launchGateway,
  launchWorker,
  type GatewayHandle,
  type LaunchedProcess,
  type TestDatabase,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpRequest } from '../bench/mcp-requests.js';
import { readHistory } from '../history/read-history.js';
import { createHistoryRecorder, type HistoryRecorder } from '../history/recorder.js';
import { replyFields } from '../history/reply-fields.js';
import { collectStepLog } from '../history/step-log-collector.js';
import { checkHistory } from './checker.js';
import { UNKNOWN_TASK_ERROR } from './unknown-task-error.js';

/** A real gateway and a real worker (STEP_LOG=on); the history is recorded as the load tool will. */
const TOKENS = { acme: 'tok_acme_000000000000000000', globex: 'tok_globex_0000000000000000' };
let database: TestDatabase;
let gateway: GatewayHandle;
let worker: LaunchedProcess;
let historyPath: string;
let recorder: HistoryRecorder;
let stepsCollected: Promise<void>;

beforeAll(async () => {
  database = await createTestDatabase('loadtest_real');
  const redis = await createTestRedis('loadtest_real');
  const db = createDb({ connectionString: database.connectionString });
  await migrateToLatest(db);
  await db.destroy();
  const env = {
    DATABASE_URL: database.connectionString,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    LOG_LEVEL: 'warn',
  };
  gateway = await launchGateway({
    env: {
      ...env,
      MCP_AUTH: 'tokens',
      MCP_TOKENS: `${TOKENS.acme}:acme:alice,${TOKENS.globex}:globex:alice`,
      REQUEST_STATE_SECRET: 'loadtest-real-stack-secret-0123456789abcdef',
    },
    readyTimeoutMs: 60_000,
  });
  const launched = await launchWorker({
    env: { ...env, STEP_LOG: 'on' },
    id: 'w-real',
    readyTimeoutMs: 60_000,
  });
  worker = launched.process;
  historyPath = join(await mkdtemp(join(tmpdir(), 'loadtest-real-')), 'history.jsonl');
  recorder = createHistoryRecorder(historyPath);
  stepsCollected = collectStepLog(worker.child.stdout!, recorder);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([gateway?.process.stop(), worker?.stop()]);
  await database?.drop();
});

async function call(
  tenant: keyof typeof TOKENS,
  method: string,
  params: Record<string, unknown>,
  extra: { probe?: boolean; final?: boolean } = {},
) {
  const spec = mcpRequest(method, params, 1, TOKENS[tenant]);
  const taskId = typeof params.taskId === 'string' ? params.taskId : undefined;
  const op = extra.final
    ? undefined
    : recorder.request({
        replica: 'gw-1',
        tenant,
        method,
        taskId,
        ...(method === 'tools/call'
          ? { tool: params.name as string, arguments: params.arguments as Record<string, never> }
          : {}),
        ...(extra.probe ? { probe: true } : {}),
      });
  const response = await fetch(`${gateway.url}${spec.path}`, {
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
  });
  const fields = replyFields(response.status, await response.text(), response.headers);
  if (op === undefined) {
    recorder.final({ replica: 'gw-1', tenant, taskId: taskId!, ...fields });
  } else {
    recorder.reply(op, {
      replica: 'gw-1',
      tenant,
      method,
      ...fields,
      taskId: fields.taskId ?? taskId,
    });
  }
  return fields;
}

describe('a history recorded against a real gateway and worker', () => {
  it('passes the checker, with every step execution collected from the worker log', async () => {
    recorder.run({ taskBoundMs: 60_000, seed: 'real-stack' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const created = await call('acme', 'tools/call', { name: 'failing_job', arguments: {} });
      expect(created.status).toBe('working');
      ids.push(created.taskId!);
    }
    for (const taskId of ids) {
      for (let tries = 0; ; tries += 1) {
        const seen = await call('acme', 'tasks/get', { taskId });
        if (seen.status === 'completed') break;
        expect(tries).toBeLessThan(300);
        await sleep(100);
      }
      const probe = await call('globex', 'tasks/get', { taskId }, { probe: true });
      // The checker's idea of the unknown-id error is exactly what the gateway answers.
      expect(probe).toEqual({
        httpStatus: probe.httpStatus,
        errorCode: UNKNOWN_TASK_ERROR.code,
        errorMessage: UNKNOWN_TASK_ERROR.message,
      });
      await call('acme', 'tasks/get', { taskId }, { final: true });
    }
    await worker.stop();
    await stepsCollected;
    await recorder.close();

    const records = await readHistory(historyPath);
    const steps = records.filter((r) => r.kind === 'step');
    expect(steps.map((s) => [s.taskId, s.phase, s.worker, s.epoch]).sort()).toEqual(
      ids
        .flatMap((id) => [
          [id, 'end', 'w-real', 1],
          [id, 'start', 'w-real', 1],
        ])
        .sort(),
    );
    const result = checkHistory(records);
    expect(result.violations).toEqual([]);
    expect(result.acknowledgedTasks).toBe(5);
    expect(result.history.foreignReads).toHaveLength(5);
  });
});
