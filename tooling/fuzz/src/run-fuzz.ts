import { startToolStack, type ToolStack } from '@mcp-tasks/testing';
import fc from 'fast-check';
import {
  TASK_PLACEHOLDER,
  envelope,
  headersFor,
  fuzzCases,
  type Category,
  type FuzzCase,
  type FuzzRequest,
  type FuzzWorld,
} from './cases.js';
import { send, type Outcome } from './send.js';
import { judge, type Violation } from './verdict.js';

export interface FuzzOptions {
  /** Messages to send (a session's steps count one each). */
  runs: number;
  seed: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Longest wait for one answer; longer is a hang. */
  timeoutMs?: number;
  /** Told after each message (progress). */
  onProgress?: (sent: number) => void;
}

export interface FuzzReport {
  seed: number;
  messages: number;
  durationMs: number;
  /** Messages per category. */
  categories: Partial<Record<Category, number>>;
  /** Answers per HTTP status; 0: a header Node's own client refused to send. */
  statuses: Record<string, number>;
  violations: { case: number; category: Category; request: string; violation: Violation }[];
  /** Lines the gateway logged at error level or above (each one an unexpected error). */
  gatewayErrorLogs: string[];
  /** After the run: the processes' health endpoints and whether they still run. */
  health: { gatewayLive: boolean; gatewayReady: boolean; workerLive: boolean };
}

const TOKENS = { alice: 'fuzz_alice_token_0000000000', eve: 'fuzz_eve_token_000000000000' };
const ANY_ARGUMENTS_TOOL = './apps/gateway/test/fixtures/any-arguments-tool.ts';

/**
 * Starts a real gateway and worker on a fresh Postgres database and Redis prefix, builds a world
 * of real tasks and states, sends `runs` seeded messages at the gateway, and reports every answer
 * the issue forbids, then whether both processes are still healthy.
 */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const stack = await startToolStack({
    label: 'fuzz',
    toolModules: [ANY_ARGUMENTS_TOOL],
    toolPacks: 'reports,conformance',
    env: {
      MCP_AUTH: 'tokens',
      MCP_TOKENS: `${TOKENS.alice}:acme:alice,${TOKENS.eve}:globex:eve`,
      REQUEST_STATE_SECRET: 'fuzz-request-state-secret-0123456789abcdef',
      LOG_LEVEL: 'warn',
      REPORT_STEP_MS: '20',
    },
  });
  try {
    return await fuzzAgainst(stack, options);
  } finally {
    await stack.stop();
  }
}

async function fuzzAgainst(stack: ToolStack, options: FuzzOptions): Promise<FuzzReport> {
  const url = new URL(stack.gatewayUrl);
  const target = {
    host: url.hostname,
    port: Number(url.port),
    timeoutMs: options.timeoutMs ?? 15_000,
  };
  const world = await buildWorld(stack.gatewayUrl);
  const logStart = stack.gateway.output().length;
  const cases = pickCases(world, options);
  const report: FuzzReport = {
    seed: options.seed,
    messages: 0,
    durationMs: 0,
    categories: {},
    statuses: {},
    violations: [],
    gatewayErrorLogs: [],
    health: { gatewayLive: false, gatewayReady: false, workerLive: false },
  };
  const started = Date.now();
  const record = (index: number, fuzz: FuzzCase, request: FuzzRequest, outcome: Outcome) => {
    report.messages += 1;
    report.categories[fuzz.category] = (report.categories[fuzz.category] ?? 0) + 1;
    const status = outcome.kind === 'answered' ? String(outcome.status) : outcome.kind;
    report.statuses[status] = (report.statuses[status] ?? 0) + 1;
    const violation = judge(outcome);
    if (violation !== undefined) {
      report.violations.push({
        case: index,
        category: fuzz.category,
        request: describe(request),
        violation,
      });
    }
    options.onProgress?.(report.messages);
  };
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      const fuzz = cases[index]!;
      let taskId: string | undefined;
      for (const [step, raw] of fuzz.requests.entries()) {
        const request = step === 0 ? raw : withTask(raw, taskId);
        const outcome = await send(request, target);
        record(index, fuzz, request, outcome);
        if (step === 0 && fuzz.category === 'session') taskId = createdTaskId(outcome);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  report.durationMs = Date.now() - started;
  report.gatewayErrorLogs = errorLines(stack.gateway.output().slice(logStart));
  report.health = await health(stack);
  return report;
}

/** Seeded cases until their messages add up to `runs` (the last one may be cut short). */
function pickCases(world: FuzzWorld, options: FuzzOptions): FuzzCase[] {
  const sampled = fc.sample(fuzzCases(world), { seed: options.seed, numRuns: options.runs });
  const cases: FuzzCase[] = [];
  let messages = 0;
  for (const fuzz of sampled) {
    if (messages >= options.runs) break;
    const requests = fuzz.requests.slice(0, options.runs - messages);
    cases.push({ ...fuzz, requests });
    messages += requests.length;
  }
  return cases;
}

/** A session's later step, naming the task its first step created (or one that never existed). */
function withTask(request: FuzzRequest, taskId: string | undefined): FuzzRequest {
  if (request.kind !== 'http') return request;
  const id = taskId ?? 'tsk_0000000000000000notthere';
  const body =
    typeof request.body === 'string'
      ? request.body.replaceAll(JSON.stringify(TASK_PLACEHOLDER).slice(1, -1), id)
      : request.body;
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [
      name,
      value.replaceAll(TASK_PLACEHOLDER, id),
    ]),
  );
  return { ...request, body, headers };
}

function createdTaskId(outcome: Outcome): string | undefined {
  if (outcome.kind !== 'answered' || outcome.status !== 200) return undefined;
  try {
    const taskId = (JSON.parse(outcome.body) as { result?: { taskId?: unknown } }).result?.taskId;
    return typeof taskId === 'string' ? taskId : undefined;
  } catch {
    return undefined;
  }
}

function describe(request: FuzzRequest): string {
  const text =
    request.kind === 'raw'
      ? request.bytes
      : `${JSON.stringify(request.headers)} ${String(request.body)}`;
  return text.length > 400 ? `${text.slice(0, 400)}… (${text.length} chars)` : text;
}

function errorLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        return false;
      }
    })
    .map((line) => line.slice(0, 1_000));
}

async function health(stack: ToolStack): Promise<FuzzReport['health']> {
  const ok = async (url: string) => {
    try {
      return (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status === 200;
    } catch {
      return false;
    }
  };
  const workerUrl = stack.workerMetricsUrls[0];
  return {
    gatewayLive: stack.gateway.child.exitCode === null && (await ok(`${stack.gatewayUrl}/healthz`)),
    gatewayReady: await ok(`${stack.gatewayUrl}/readyz`),
    workerLive:
      stack.workers[0]?.child.exitCode === null &&
      workerUrl !== undefined &&
      (await ok(`${workerUrl}/healthz`)),
  };
}

// ---- the world: real tasks, states and keys to aim the cases at --------------------------------

async function rpc(
  gatewayUrl: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${gatewayUrl}/mcp`, {
    method: 'POST',
    headers: headersFor(method, params, token),
    body: JSON.stringify(envelope(method, params, 1)),
  });
  const body = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (body.result === undefined)
    throw new Error(`${method} failed in the fuzz setup: ${JSON.stringify(body)}`);
  return body.result;
}

async function buildWorld(gatewayUrl: string): Promise<FuzzWorld> {
  const create = async (token: string, name: string, args: Record<string, unknown>) =>
    (await rpc(gatewayUrl, token, 'tools/call', { name, arguments: args })).taskId as string;
  const reports = await Promise.all(
    [1, 2, 3].map(() => create(TOKENS.alice, 'generate_report', { size: 'small' })),
  );
  const kept = await Promise.all(
    [1, 2].map(() => create(TOKENS.alice, 'keep_anything', { a: [1, { b: 2 }] })),
  );
  const eveTasks = await Promise.all(
    [1, 2].map(() => create(TOKENS.eve, 'generate_report', { size: 'small' })),
  );
  const roundOne = (token: string) =>
    rpc(gatewayUrl, token, 'tools/call', { name: 'test_tool_with_task', arguments: {} }).then(
      (result) => result.requestState as string,
    );
  const requestStates = { alice: await roundOne(TOKENS.alice), eve: await roundOne(TOKENS.eve) };
  // The reports park for approval once the worker ran their first steps.
  const awaitingInput: FuzzWorld['awaitingInput'] = [];
  const deadline = Date.now() + 60_000;
  for (const taskId of reports) {
    for (;;) {
      const task = await rpc(gatewayUrl, TOKENS.alice, 'tasks/get', { taskId });
      if (task.status === 'input_required') {
        awaitingInput.push({ taskId, keys: Object.keys(task.inputRequests as object) });
        break;
      }
      if (Date.now() > deadline)
        throw new Error(`fuzz setup: task ${taskId} never asked for input`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    tokens: TOKENS,
    aliceTasks: [...reports, ...kept],
    awaitingInput,
    eveTasks,
    requestStates,
  };
}
