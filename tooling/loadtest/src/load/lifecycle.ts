import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminalStatus } from '@mcp-tasks/tasks';
import { createClient } from '@mcp-tasks/client';
import type { HistoryRecorder } from '../history/recorder.js';
import { sendRecorded, type Endpoint, type SentReply, type Tenant } from './endpoints.js';
import type { AnswerStyle, LifecyclePlan, TenantRole } from './mix.js';
import { createRng, type Rng } from './prng.js';
import { createRecordingFetch } from './recording-fetch.js';
import { withTaskSpan } from './client-tracing.js';

export interface LoadContext {
  recorder: HistoryRecorder;
  /** Gateway replicas and the proxy; creates and polls pick among them. */
  endpoints: Endpoint[];
  /** The two tenants of the mix (mix.ts): each plan's task is one's, the other probes it. */
  tenants: Record<TenantRole, Tenant>;
  taskBoundMs: number;
  /** Aborted when the run stops early (a chaos round failed): each lifecycle ends at its next look. */
  stop?: AbortSignal;
}

export interface LifecycleOutcome {
  taskId?: string;
  status?: string;
  /** A transport or JSON-RPC error on any request of this lifecycle. */
  errors: number;
}

const DEFAULT_POLL_MS = 500;
/** How often a client that walked away from its input request looks in on the task. */
const ABANDONED_POLL_MS = 5_000;
const INTERNAL_ERROR = -32603;
/** Reconnects sooner than the client's default (250 ms … 30 s): chaos keeps them short. */
const SUBSCRIBER_BACKOFF = { initialMs: 100, maxMs: 2_000 };

/** What a client saw of its task on one look (a poll's reply or a pushed snapshot). */
interface Seen {
  status?: string;
  inputKeys?: readonly string[];
}
const UNKNOWN_KEY = 'no_such_input_key';

type Answer = { action: 'accept'; content: { name: string } } | { action: 'decline' };

function answerFor(style: AnswerStyle, plan: LifecyclePlan, key: string): Answer {
  return style === 'decline'
    ? { action: 'decline' }
    : { action: 'accept', content: { name: `${key}-${plan.index}` } };
}

/** Other replicas than the one that created the task, when there are others. */
function pollTarget(rng: Rng, endpoints: Endpoint[], creator: Endpoint): Endpoint {
  const others = endpoints.filter((e) => e !== creator);
  return rng.pick(others.length > 0 ? others : endpoints);
}

/**
 * One simulated client's task, start to end: create on one replica, poll others at the server's
 * pollIntervalMs, answer its input rounds in the plan's style, maybe cancel, maybe let the second
 * tenant probe its id. Every request and reply goes into the history. With tracing on, all of it
 * runs in one client span whose context every request carries (client-tracing.ts).
 */
export async function runLifecycle(
  ctx: LoadContext,
  plan: LifecyclePlan,
): Promise<LifecycleOutcome> {
  const attributes = {
    'gen_ai.tool.name': plan.tool,
    'mcp_tasks.tenant': ctx.tenants[plan.tenant].name,
  };
  return withTaskSpan(attributes, async (span) => {
    const outcome = await followTask(ctx, plan);
    if (outcome.taskId !== undefined) span.setAttribute('mcp_tasks.task.id', outcome.taskId);
    if (outcome.status !== undefined) span.setAttribute('mcp_tasks.task.status', outcome.status);
    return outcome;
  });
}

type Send = (
  endpoint: Endpoint,
  tenant: Tenant,
  method: string,
  params: Record<string, unknown>,
  extra?: Parameters<typeof sendRecorded>[5],
) => Promise<SentReply>;

/** One followed task: what the lifecycle knows of it and what it has done so far. */
interface Following {
  ctx: LoadContext;
  plan: LifecyclePlan;
  rng: Rng;
  owner: Tenant;
  creator: Endpoint;
  taskId: string;
  deadline: number;
  outcome: LifecycleOutcome;
  send: Send;
  pollMs: number;
  answered: Set<string>;
  triedUnknownKey: boolean;
  /** Set once an abandoning client has seen its input request. */
  walkedAway: boolean;
}

const stopped = (f: Following) => f.ctx.stop?.aborted === true;

/** tasks/get on other replicas at the server's pollIntervalMs, until the bound. */
async function* polled(f: Following): AsyncGenerator<Seen> {
  const { ctx } = f;
  while (Date.now() < f.deadline && !stopped(f)) {
    await sleep(f.pollMs, undefined, { signal: ctx.stop }).catch(() => undefined);
    if (stopped(f)) return;
    const seen = await f.send(pollTarget(f.rng, ctx.endpoints, f.creator), f.owner, 'tasks/get', {
      taskId: f.taskId,
    });
    f.pollMs = f.walkedAway ? ABANDONED_POLL_MS : (seen.pollIntervalMs ?? f.pollMs);
    yield seen;
  }
}

/**
 * The client's subscribe() on another replica: snapshots pushed on `subscriptions/listen`, with
 * its own catch-up reads and reconnects (all recorded by the recording fetch). Should the
 * client give up (an error it does not retry), the lifecycle polls instead.
 */
async function* subscribed(f: Following): AsyncGenerator<Seen> {
  const { ctx } = f;
  const endpoint = pollTarget(f.rng, ctx.endpoints, f.creator);
  const client = createClient({
    url: endpoint.url,
    token: f.owner.token,
    fetch: createRecordingFetch(ctx.recorder, endpoint, f.owner),
    backoff: SUBSCRIBER_BACKOFF,
  });
  try {
    const timeout = AbortSignal.timeout(Math.max(1, f.deadline - Date.now()));
    const signal = ctx.stop === undefined ? timeout : AbortSignal.any([timeout, ctx.stop]);
    for await (const snapshot of client.task(f.taskId).subscribe({ signal })) {
      yield { status: snapshot.status, inputKeys: Object.keys(snapshot.inputRequests ?? {}) };
    }
  } catch {
    f.outcome.errors += 1;
  }
  yield* polled(f);
}

/**
 * Sends one round's answers (the plan's style: full, partial, twice, …). Returns whether the
 * answer got in, and whether a failure said nothing about the task (no answer, an internal error).
 */
async function sendAnswers(
  f: Following,
  keys: string[],
): Promise<{ accepted: boolean; unanswered: boolean }> {
  const { plan, rng, ctx, owner, taskId } = f;
  if (plan.answer === 'unknown-key' && !f.triedUnknownKey) {
    f.triedUnknownKey = true;
    await f.send(
      rng.pick(ctx.endpoints),
      owner,
      'tasks/update',
      { taskId, inputResponses: { [UNKNOWN_KEY]: answerFor('full', plan, UNKNOWN_KEY) } },
      { inputKeys: [UNKNOWN_KEY] },
    );
  }
  const inputResponses = Object.fromEntries(keys.map((k) => [k, answerFor(plan.answer, plan, k)]));
  const times = plan.answer === 'twice' ? 2 : 1;
  let accepted = false;
  let unanswered = false;
  for (let i = 0; i < times; i += 1) {
    const reply = await f.send(
      rng.pick(ctx.endpoints),
      owner,
      'tasks/update',
      { taskId, inputResponses },
      { inputKeys: keys },
    );
    if (reply.errorMessage === undefined) {
      accepted = true;
      for (const k of keys) f.answered.add(k);
    }
    unanswered = reply.errorCode === undefined || reply.errorCode === INTERNAL_ERROR;
  }
  return { accepted, unanswered };
}

/**
 * A poller answers one round per look; a subscriber may see no new snapshot until all of a
 * round's keys are in, so it answers a partial round's keys one update after the other.
 */
async function answerInput(f: Following, seen: Seen): Promise<void> {
  const { plan } = f;
  do {
    const pending = (seen.inputKeys ?? []).filter((key) => !f.answered.has(key));
    if (pending.length === 0) break;
    const keys = plan.answer === 'partial' ? pending.slice(0, 1) : pending;
    const { accepted, unanswered } = await sendAnswers(f, keys);
    if (accepted || plan.follow === 'poll') continue;
    // A subscriber gets no new snapshot while its answer is missing, so after a failure that
    // says nothing about the task (no answer, an internal error) it sends the answer again.
    if (!unanswered || Date.now() >= f.deadline) break;
    await sleep(f.pollMs);
  } while (plan.follow === 'subscribe');
}

async function followTask(ctx: LoadContext, plan: LifecyclePlan): Promise<LifecycleOutcome> {
  const rng = createRng(plan.seed);
  const owner = ctx.tenants[plan.tenant];
  const prober = ctx.tenants[plan.tenant === 'heavy' ? 'light' : 'heavy'];
  const outcome: LifecycleOutcome = { errors: 0 };
  const send: Send = async (endpoint, tenant, method, params, extra = {}) => {
    const reply = await sendRecorded(ctx.recorder, endpoint, tenant, method, params, extra);
    if (reply.errorMessage !== undefined) outcome.errors += 1;
    return reply;
  };

  const creator = rng.pick(ctx.endpoints);
  const created = await send(
    creator,
    owner,
    'tools/call',
    { name: plan.tool, arguments: plan.arguments },
    { boundMs: ctx.taskBoundMs },
  );
  if (created.taskId === undefined) return outcome;
  const taskId = created.taskId;
  outcome.taskId = taskId;
  outcome.status = created.status;
  const f: Following = {
    ctx,
    plan,
    rng,
    owner,
    creator,
    taskId,
    deadline: Date.now() + ctx.taskBoundMs,
    outcome,
    send,
    pollMs: created.pollIntervalMs ?? DEFAULT_POLL_MS,
    answered: new Set<string>(),
    triedUnknownKey: false,
    walkedAway: false,
  };
  let seenCount = 0;

  if (plan.probe) {
    await send(rng.pick(ctx.endpoints), prober, 'tasks/get', { taskId }, { probe: true });
  }
  if (isTerminalStatus(outcome.status as never)) return outcome;
  for await (const seen of plan.follow === 'subscribe' ? subscribed(f) : polled(f)) {
    if (seen.status === undefined) continue;
    outcome.status = seen.status;
    if (plan.cancelAfterPolls === seenCount)
      await send(rng.pick(ctx.endpoints), owner, 'tasks/cancel', { taskId });
    seenCount += 1;
    if (isTerminalStatus(seen.status as never)) break;
    if (seen.status !== 'input_required') continue;
    if (plan.abandon === true) {
      f.walkedAway = true;
      f.pollMs = ABANDONED_POLL_MS;
      continue;
    }
    await answerInput(f, seen);
  }
  return outcome;
}

/** One task read by its owner from every replica (a final read, into the history). */
export async function readFinal(
  ctx: LoadContext,
  taskId: string,
  tenant: TenantRole,
): Promise<void> {
  for (const endpoint of ctx.endpoints)
    await sendRecorded(
      ctx.recorder,
      endpoint,
      ctx.tenants[tenant],
      'tasks/get',
      { taskId },
      { final: true },
    );
}

/** After the load: every task read by its owner from every replica, into the history. */
export async function readFinals(
  ctx: LoadContext,
  tasks: readonly { taskId: string; tenant: TenantRole }[],
  concurrency: number,
): Promise<void> {
  let next = 0;
  const reader = async () => {
    while (next < tasks.length) {
      const { taskId, tenant } = tasks[next++]!;
      await readFinal(ctx, taskId, tenant);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, reader));
}
