/**
 * `pnpm demo`: a guided tour of one deployment through `@mcp-tasks/client`, saying after each
 * step what it proved. Three ways to run it:
 *
 *   pnpm demo                        the `pnpm stack` endpoint, http://127.0.0.1:8080/mcp
 *   pnpm demo --url URL --token T    any deployment (add --other-token for the tenant check)
 *   pnpm demo --spawn                starts its own two gateways and two workers (needs only
 *                                    Postgres and Redis: DATABASE_URL / REDIS_URL); for CI
 *
 * With process control (`--spawn`, or a `.stack/state.json` written by `pnpm stack` for the same
 * URL, or `--stack-state FILE`) it also kill -9s the worker holding the lease mid-render and says
 * which worker took over from which checkpoint. Without it, it says how to do that by hand.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient, McpError, type McpTasksClient, type TaskSnapshot } from '@mcp-tasks/client';
import { launchGateway, launchWorker } from '@mcp-tasks/testing';
import pg from 'pg';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const DEFAULT_URL = 'http://127.0.0.1:8080/mcp';
const DEMO_TOKENS = { alice: 'demo-token-alice', mallory: 'demo-token-mallory' };

const { values: flags } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    'other-token': { type: 'string' },
    'stack-state': { type: 'string' },
    spawn: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (flags.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0] + '*/\n',
  );
  process.exit(0);
}

/** What the demo may do to the processes behind the URL. */
interface ProcessControl {
  /** Where to read `lease_owner` and the checkpoint of the task. */
  databaseUrl: string;
  /** kill -9 the worker whose WORKER_ID is `workerId`; false when it is not ours to kill. */
  killWorker(workerId: string): boolean;
  describe: string;
}

interface StackState {
  url: string;
  databaseUrl: string;
  tokens?: Record<string, string>;
  processes: { name: string; role: string; pid?: number; workerId?: string }[];
}

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** A wrapped paragraph after a step: what the step just proved. */
function proved(text: string): void {
  say(`   ✔ ${text}`);
}

/**
 * The line shown while waiting: on a terminal it is redrawn with the elapsed time; in a log
 * it is printed once per change.
 */
function progress(label: string): { update(text: string): void; done(text: string): void } {
  const started = Date.now();
  let current = '';
  const tty = process.stdout.isTTY === true;
  const draw = () => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`\r\x1b[2K   … ${label}: ${current} (${seconds} s)`);
  };
  const timer = tty ? setInterval(draw, 250) : undefined;
  return {
    update(text) {
      if (text === current) return;
      current = text;
      if (tty) draw();
      else say(`   … ${label}: ${text}`);
    },
    done(text) {
      clearInterval(timer);
      if (tty) process.stdout.write('\r\x1b[2K');
      say(`   ${text} (after ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    },
  };
}

function line(snapshot: TaskSnapshot): string {
  const keys = Object.keys(snapshot.inputRequests ?? {});
  return `${snapshot.status}${snapshot.statusMessage ? ` "${snapshot.statusMessage}"` : ''}${keys.length ? ` asks: ${keys.join(', ')}` : ''}`;
}

/** Follows a task by polling (honouring pollIntervalMs) until `until` holds, with a progress line. */
async function waitFor(
  client: McpTasksClient,
  taskId: string,
  label: string,
  until: (s: TaskSnapshot) => boolean,
): Promise<TaskSnapshot> {
  const bar = progress(label);
  for await (const snapshot of client.task(taskId).poll()) {
    bar.update(line(snapshot));
    if (until(snapshot)) {
      bar.done(line(snapshot));
      return snapshot;
    }
  }
  throw new Error(`task ${taskId} stopped before ${label}`);
}

// --- spawn mode: today's self-contained stack -------------------------------------------------

/** The gateways' and workers' environment: a database and Redis prefix of this run's own. */
function spawnEnv(suffix: string, databaseUrl: string, redisUrl: string) {
  const shared = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `mcpt-demo-${suffix}`,
    LOG_LEVEL: 'warn',
  };
  const gatewayEnv = {
    ...shared,
    MCP_AUTH: 'tokens',
    MCP_TOKENS: `${DEMO_TOKENS.alice}:acme:alice,${DEMO_TOKENS.mallory}:globex:mallory`,
    REQUEST_STATE_SECRET: randomBytes(32).toString('hex'),
  };
  const workerEnv = {
    ...shared,
    LEASE_MS: '3000',
    SWEEP_INTERVAL_MS: '500',
    REPORT_STEP_MS: '700',
  };
  return { gatewayEnv, workerEnv };
}

async function createDatabase(baseUrl: string, dbName: string): Promise<void> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  await admin.end();
}

async function dropDatabase(baseUrl: string, dbName: string): Promise<void> {
  const cleanup = new pg.Client({ connectionString: baseUrl });
  await cleanup.connect();
  await cleanup.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await cleanup.end();
}

async function spawnStack(): Promise<{
  url: string;
  secondUrl: string;
  control: ProcessControl;
  stop(): Promise<void>;
}> {
  const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const dbName = `mcpt_demo_${suffix}`;
  const databaseUrl = Object.assign(new URL(baseUrl), { pathname: `/${dbName}` }).toString();
  const { gatewayEnv, workerEnv } = spawnEnv(suffix, databaseUrl, redisUrl);
  // The builds on plain node, their output straight to this terminal; the gateways on ephemeral
  // ports (the demo never collides with a running stack or another run), ready at /readyz.
  const launch = { build: 'dist', stdio: 'inherit', readyPath: '/readyz' } as const;
  // The workers are not waited for (the first task waits for them) and bind their metrics to a
  // port of the system's choosing.
  const worker = (id: string) =>
    launchWorker({
      ...launch,
      env: workerEnv,
      id,
      overrides: { METRICS_PORT: '0' },
      waitReady: false,
    });

  await createDatabase(baseUrl, dbName);
  const a = await launchGateway({
    ...launch,
    env: { ...gatewayEnv, MCP_MIGRATE_ON_START: 'true' },
  });
  const [b, ...workers] = await Promise.all([
    launchGateway({ ...launch, env: gatewayEnv }),
    worker('worker-1'),
    worker('worker-2'),
  ] as const);
  say(
    `started gateway A :${a.port}, gateway B :${b.port}, worker-1, worker-2 (database ${dbName})`,
  );
  const processes = [a.process, b.process, ...workers.map((w) => w.process)];
  return {
    url: `${a.url}/mcp`,
    secondUrl: `${b.url}/mcp`,
    control: {
      databaseUrl,
      describe: 'the processes this demo started',
      killWorker(workerId) {
        const child = workers.find((w) => w.id === workerId);
        if (child === undefined) return false;
        child.process.kill('SIGKILL');
        return true;
      },
    },
    async stop() {
      for (const launched of processes) launched.kill('SIGTERM');
      await Promise.all(processes.map((launched) => launched.exited));
      await dropDatabase(baseUrl, dbName);
    },
  };
}

/** `pnpm stack` leaves `.stack/state.json`; it gives process control when it is for this URL. */
function stackControl(url: string): { control?: ProcessControl; state?: StackState } {
  const path = flags['stack-state'] ?? `${root}.stack/state.json`;
  if (!existsSync(path)) return {};
  const state = JSON.parse(readFileSync(path, 'utf8')) as StackState;
  if (flags['stack-state'] === undefined && state.url !== url) return {};
  return {
    state,
    control: {
      databaseUrl: state.databaseUrl,
      describe: `the stack in ${path}`,
      killWorker(workerId) {
        const worker = state.processes.find((p) => p.role === 'worker' && p.workerId === workerId);
        if (worker?.pid === undefined) return false;
        try {
          process.kill(worker.pid, 'SIGKILL');
          return true;
        } catch {
          return false;
        }
      },
    },
  };
}

// --- the tour ---------------------------------------------------------------------------------

/** The tour's clients: alice, alice again (anywhere behind the balancer), and the reader. */
function tourClients(url: string, token: string) {
  const alice = createClient({
    url,
    token,
    clientInfo: { name: 'mcp-tasks-demo', version: '1.0.0' },
  });
  // A second client on the same endpoint: behind a load balancer its requests land anywhere.
  const aliceElsewhere = createClient({
    url,
    token,
    clientInfo: { name: 'mcp-tasks-demo-2', version: '1.0.0' },
  });
  const secondReplica = process.env.DEMO_SECOND_URL;
  const reader = secondReplica
    ? createClient({
        url: secondReplica,
        token,
        clientInfo: { name: 'mcp-tasks-demo-2', version: '1.0.0' },
      })
    : aliceElsewhere;

  return { alice, aliceElsewhere, reader, secondReplica };
}

type TourClients = ReturnType<typeof tourClients>;

async function discoverStep({ alice }: TourClients, url: string): Promise<void> {
  say(`\n1. server/discover on ${url}`);
  const discovered = await alice.discover();
  say(
    `   supportedVersions ${JSON.stringify(discovered.supportedVersions)}, extensions ${JSON.stringify(Object.keys((discovered.capabilities as { extensions?: object }).extensions ?? {}))}`,
  );
  proved(
    'no initialize handshake: every request carries its own _meta (version, capabilities), so any replica can answer any request.',
  );
}

async function callStep({ alice }: TourClients) {
  say('\n2. tools/call generate_report {size: "large"}');
  const call = await alice.callTool('generate_report', { size: 'large' });
  if (call.kind !== 'task') throw new Error('generate_report answered without a task');
  const taskId = call.handle.taskId;
  say(
    `   resultType "task", status ${call.created.status}, taskId ${taskId}, pollIntervalMs ${call.created.pollIntervalMs}`,
  );
  proved(
    'the call returned a durable handle at once; the task row was committed in Postgres before this reply was sent.',
  );
  return call;
}

async function readAtOnceStep({ reader, secondReplica }: TourClients, taskId: string) {
  say(
    `\n3. tasks/get at once${secondReplica ? ` on the other replica (${secondReplica})` : ' from a second client'}`,
  );
  const immediate = await reader.task(taskId).get();
  say(`   resultType "${String(immediate.resultType)}", status ${immediate.status}`);
  proved('read-your-write across replicas: the handle resolves wherever the next request lands.');
  say(
    '   Why resultType "complete" next to status "working" is not a contradiction: resultType says what',
  );
  say(
    '   kind of reply this is — a complete answer to tasks/get (not a new task, not an input request) —',
  );
  say('   while status is the state of the task itself. The read is finished; the task is not.');
}

async function otherTenantStep(url: string, otherToken: string | undefined, taskId: string) {
  say('\n4. The same tasks/get as another tenant, then with an id that never existed');
  if (otherToken === undefined) {
    say('   skipped: pass --other-token with a token of another tenant to see it');
  } else {
    const mallory = createClient({ url, token: otherToken });
    const describeError = async (id: string) => {
      try {
        await mallory.task(id).get();
        return 'answered (!)';
      } catch (error) {
        return error instanceof McpError
          ? `HTTP ${error.httpStatus}, error ${error.code} "${error.message}"`
          : String(error);
      }
    };
    const foreign = await describeError(taskId);
    const missing = await describeError('tsk_AAAAAAAAAAAAAAAAAAAAAAAA');
    say(`   another tenant: ${foreign}`);
    say(`   unknown id:     ${missing}`);
    proved(
      foreign === missing
        ? 'identical replies: nobody can tell a foreign task from a missing one.'
        : 'the replies DIFFER — that would leak task existence',
    );
  }
}

async function answerInputsStep(
  { alice, reader }: TourClients,
  call: Awaited<ReturnType<typeof callStep>>,
): Promise<void> {
  const taskId = call.handle.taskId;
  say('\n5. Waiting for the outline');
  await waitFor(alice, taskId, 'outline', (s) => s.status === 'input_required');
  proved(
    'the worker paused the task for input and released its lease; nothing runs while it waits.',
  );

  say(
    '\n6. tasks/update with only approve_outline (the ElicitResult {action: "accept", content: {approved: true}})',
  );
  await call.handle.update({ approve_outline: { action: 'accept', content: { approved: true } } });
  const partial = await reader.task(taskId).get();
  say(`   acknowledged; tasks/get now: ${line(partial)}`);
  proved('a partial answer is stored, and the task keeps waiting for the key still missing.');

  say('\n7. tasks/update with choose_format = html');
  await call.handle.update({ choose_format: { action: 'accept', content: { format: 'html' } } });
  proved('with every key answered the task is queued again and a worker picks it up.');
}

async function renderStep(
  { alice }: TourClients,
  taskId: string,
  control: ProcessControl | undefined,
): Promise<TaskSnapshot> {
  say('\n8. Rendering');
  let final: TaskSnapshot;
  if (control === undefined) {
    say(
      '   no process control here (no --spawn, no .stack/state.json for this URL), so nothing is killed.',
    );
    say(
      '   To see a crash recovered, kill the worker holding the lease while it renders, by hand:',
    );
    say('     docker compose kill -s SIGKILL worker-1     (or: kill -9 <pid of that worker>)');
    say(
      '   then run `pnpm cli watch ' +
        taskId +
        '`: another worker takes over from the last checkpoint.',
    );
    final = await waitFor(alice, taskId, 'rendering', (s) =>
      ['completed', 'failed', 'cancelled'].includes(s.status),
    );
  } else {
    final = await killMidRender(alice, taskId, control);
  }
  return final;
}

function resultStep(final: TaskSnapshot): void {
  say(`\n9. Result: status ${final.status}`);
  const text = final.result?.content?.[0]?.text ?? '';
  say(`   text: ${text.length > 80 ? `${text.slice(0, 80).replace(/\n/g, ' ')}…` : text}`);
  say(`   structuredContent: ${JSON.stringify(final.result?.structuredContent)}`);
}

async function cancellationStep({ alice, aliceElsewhere }: TourClients): Promise<TaskSnapshot> {
  say('\n10. Cancellation: slow_compute {seconds: 60}, then tasks/cancel from another client');
  const slow = await alice.callTool('slow_compute', { seconds: 60 });
  if (slow.kind !== 'task') throw new Error('slow_compute answered without a task');
  await waitFor(alice, slow.handle.taskId, 'started', (s) =>
    /Computing:/.test(s.statusMessage ?? ''),
  );
  await aliceElsewhere.task(slow.handle.taskId).cancel();
  const cancelled = await waitFor(alice, slow.handle.taskId, 'cancelling', (s) =>
    ['completed', 'failed', 'cancelled'].includes(s.status),
  );
  proved(
    `the worker stopped cooperatively: status ${cancelled.status}, "${cancelled.statusMessage ?? ''}".`,
  );
  return cancelled;
}

async function tour(
  url: string,
  token: string,
  otherToken: string | undefined,
  control?: ProcessControl,
) {
  const clients = tourClients(url, token);
  await discoverStep(clients, url);
  const call = await callStep(clients);
  const taskId = call.handle.taskId;
  await readAtOnceStep(clients, taskId);
  await otherTenantStep(url, otherToken, taskId);
  await answerInputsStep(clients, call);
  const final = await renderStep(clients, taskId, control);
  resultStep(final);
  const cancelled = await cancellationStep(clients);

  return final.status === 'completed' && cancelled.status === 'cancelled';
}

async function killMidRender(
  client: McpTasksClient,
  taskId: string,
  control: ProcessControl,
): Promise<TaskSnapshot> {
  const db = new pg.Client({ connectionString: control.databaseUrl });
  await db.connect();
  try {
    const terminal = (s: TaskSnapshot) => ['completed', 'failed', 'cancelled'].includes(s.status);
    // Mid-render: at least one section checkpointed, so the takeover has something to resume from.
    const midway = await waitFor(
      client,
      taskId,
      'rendering',
      (s) =>
        terminal(s) ||
        Number(/Rendering section (\d+) of/.exec(s.statusMessage ?? '')?.[1] ?? 0) >= 2,
    );
    if (terminal(midway)) {
      say(
        '   the report finished before the kill could happen (rendering is faster than polling here)',
      );
      return midway;
    }
    const row = async () =>
      (
        await db.query<{
          lease_owner: string | null;
          lease_epoch: number;
          rendered: number | null;
          status: string;
        }>(
          `SELECT lease_owner, lease_epoch, status, jsonb_array_length(checkpoint->'rendered') AS rendered FROM tasks WHERE id = $1`,
          [taskId],
        )
      ).rows[0];
    const before = await row();
    const holder = before?.lease_owner;
    if (!holder || !control.killWorker(holder)) {
      say(
        `   could not kill the lease holder (${holder ?? 'none'}) through ${control.describe}; waiting for the end instead`,
      );
      return await waitFor(client, taskId, 'rendering', terminal);
    }
    say(
      `   kill -9 ${holder}: it held the lease (epoch ${before?.lease_epoch}) with ${before?.rendered ?? 0} section(s) rendered and checkpointed`,
    );
    const bar = progress('waiting for the lease to expire and another worker to claim it');
    let takeover: Awaited<ReturnType<typeof row>>;
    for (;;) {
      takeover = await row();
      bar.update(`lease_owner ${takeover?.lease_owner ?? 'none'}, epoch ${takeover?.lease_epoch}`);
      if (
        takeover &&
        takeover.lease_epoch > (before?.lease_epoch ?? 0) &&
        takeover.lease_owner &&
        takeover.lease_owner !== holder
      )
        break;
      if (takeover && takeover.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    bar.done(
      `${takeover?.lease_owner ?? '?'} claimed the task (lease epoch ${takeover?.lease_epoch})`,
    );
    const final = await waitFor(client, taskId, 'rendering', terminal);
    proved(
      `${takeover?.lease_owner ?? 'another worker'} took over from the checkpoint with ${takeover?.rendered ?? before?.rendered ?? 0} of ${(final.result?.structuredContent?.sections as number | undefined) ?? '?'} sections already rendered: ` +
        `those were not redone, and ${holder}'s lease (epoch ${before?.lease_epoch}) is fenced off so a late write from it would be rejected.`,
    );
    return final;
  } finally {
    await db.end();
  }
}

async function main(): Promise<void> {
  let url: string;
  let token = flags.token;
  let otherToken = flags['other-token'];
  let control: ProcessControl | undefined;
  let stop: (() => Promise<void>) | undefined;
  if (flags.spawn) {
    const stack = await spawnStack();
    url = stack.url;
    control = stack.control;
    stop = () => stack.stop();
    process.env.DEMO_SECOND_URL ??= stack.secondUrl;
    token ??= DEMO_TOKENS.alice;
    otherToken ??= DEMO_TOKENS.mallory;
  } else {
    url = flags.url ?? process.env.MCP_URL ?? DEFAULT_URL;
    const stack = stackControl(url);
    control = stack.control;
    token ??= process.env.MCP_TOKEN ?? stack.state?.tokens?.alice ?? DEMO_TOKENS.alice;
    otherToken ??=
      stack.state?.tokens?.mallory ?? (url === DEFAULT_URL ? DEMO_TOKENS.mallory : undefined);
    say(
      `endpoint ${url}${control ? ` (process control: ${control.describe})` : ' (no process control)'}`,
    );
  }
  let ok = false;
  try {
    ok = await tour(url, token, otherToken, control);
  } catch (error) {
    if (error instanceof Error && /cannot reach/.test(error.message) && !flags.spawn) {
      say(`\n${error.message}`);
      say(
        'Start the stack first (`pnpm stack`), pass --url/--token for another deployment, or run `pnpm demo --spawn`.',
      );
    } else throw error;
  } finally {
    await stop?.();
  }
  say(
    ok
      ? '\nThe tour finished: every step behaved as described.'
      : '\nThe tour did not finish as described.',
  );
  if (!ok) process.exitCode = 1;
}

await main();
