import type { Db } from '@mcp-tasks/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayInfra,
  type GatewayInfra,
  type GatewayProcess,
} from './support/gateway-processes.js';
import { remote, rpc, type RpcOptions, type RpcReply } from './support/rpc.js';

/**
 * The per-tenant limits over real HTTP, between two real gateway processes sharing one Postgres
 * and one Redis prefix, and no worker (so every task created stays in flight): a cap of 4 tasks
 * in flight and a rate of 1 create a second with a burst of 3, per tenant.
 */
let infra: GatewayInfra;
let db: Db;
let replicas: GatewayProcess[];

beforeAll(async () => {
  infra = await createGatewayInfra('gw_tenant_limits', {
    TENANT_MAX_IN_FLIGHT: '4',
    TENANT_CREATE_RATE: '1',
    TENANT_CREATE_BURST: '3',
  });
  db = infra.db;
  replicas = await Promise.all([infra.startGateway(), infra.startGateway()]);
}, 60_000);

afterAll(async () => {
  await infra?.close();
});

const SLOW = { name: 'slow_compute', arguments: { seconds: 5 } };
const create = (replica: number, options: RpcOptions = {}): Promise<RpcReply> =>
  rpc(remote(replicas[replica]!.url), 'tools/call', SLOW, { id: 'create', ...options });

async function tasksOf(tenant: string): Promise<number> {
  const rows = await db.selectFrom('tasks').select('id').where('tenant', '=', tenant).execute();
  return rows.length;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sample from a replica's /metrics, summed over the label sets that contain `labels`. */
async function metric(replica: number, name: string, labels = ''): Promise<number> {
  const body = await (await fetch(`${replicas[replica]!.url}/metrics`)).text();
  let total = 0;
  for (const line of body.split('\n')) {
    const match = /^([a-z_]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (match?.[1] === name && (match[2] ?? '').includes(labels)) total += Number(match[3]);
  }
  return total;
}

const reasonOf = (reply: RpcReply): unknown =>
  (reply.body as { error?: { data?: { reason?: unknown } } }).error?.data?.reason;

describe('per-tenant limits on creating tasks', () => {
  it('holds the create rate across replicas with a 429 naming the limit, and writes nothing', async () => {
    const started = Date.now();
    const replies = await Promise.all([0, 1, 0, 1, 0, 1].map((replica) => create(replica)));
    const elapsedS = (Date.now() - started) / 1_000;
    const admitted = replies.filter((reply) => reply.status === 200);
    // The burst of 3, plus what 1 a second refilled while the creates ran: both replicas together.
    expect(admitted.length).toBeGreaterThanOrEqual(3);
    expect(admitted.length).toBeLessThanOrEqual(3 + Math.ceil(elapsedS));
    expect(await tasksOf('acme')).toBe(admitted.length);
    const refused = replies.find((reply) => reply.status !== 200)!;
    expect(refused.status).toBe(429);
    const retryAfterMs = (refused.error.data as { retryAfterMs: number }).retryAfterMs;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(1_000);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      id: 'create',
      error: {
        code: -32600,
        message: `This tenant creates tasks faster than allowed: at most 1 per second (TENANT_CREATE_RATE), 3 at once (TENANT_CREATE_BURST). Retry after ${retryAfterMs} ms.`,
        data: {
          reason: 'tenant_rate_limited',
          retryAfterMs,
          limit: 'TENANT_CREATE_RATE',
          value: 1,
        },
      },
    });
    const refusals =
      (await metric(0, 'mcp_tenant_refusals_total', 'tenant_rate_limited')) +
      (await metric(1, 'mcp_tenant_refusals_total', 'tenant_rate_limited'));
    expect(refusals).toBe(replies.length - admitted.length);
    // Another tenant has a bucket of its own.
    expect((await create(1, { as: 'eve' })).result.taskId).toBeDefined();
    // The next token comes after the wait the refusal named.
    await sleep(retryAfterMs + 50);
    expect((await create(1)).result.taskId).toBeDefined();
  });

  it('caps the tasks in flight, counted in Postgres for every replica, and lets creates resume as tasks finish', async () => {
    // globex has 1 task in flight (above); it creates on replica 0 until the cap of 4 refuses,
    // waiting out its rate as told.
    let refused: RpcReply | undefined;
    for (let attempt = 0; attempt < 20 && refused === undefined; attempt += 1) {
      const reply = await create(0, { as: 'eve' });
      if (reasonOf(reply) === 'tenant_rate_limited')
        await sleep((reply.error.data as { retryAfterMs: number }).retryAfterMs + 20);
      else if (reply.status !== 200) refused = reply;
    }
    expect(await tasksOf('globex')).toBe(4);
    const inFlightRefusal = {
      jsonrpc: '2.0',
      id: 'create',
      error: {
        code: -32600,
        message:
          'Too many tasks in flight for this tenant: 4 accepted and not finished, the most allowed is 4 (TENANT_MAX_IN_FLIGHT). Retry once some have finished.',
        data: {
          reason: 'tenant_in_flight_limit',
          retryAfterMs: 1_000,
          limit: 'TENANT_MAX_IN_FLIGHT',
          value: 4,
        },
      },
    };
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('retry-after')).toBe('1');
    expect(refused?.body).toEqual(inFlightRefusal);
    // Replica 1 admitted one of them; its next count (a refresh later) sees all four in Postgres.
    await sleep(1_100);
    const elsewhere = await create(1, { as: 'eve' });
    expect(elsewhere.status).toBe(429);
    expect(elsewhere.body).toEqual(inFlightRefusal);
    expect(await tasksOf('globex')).toBe(4);
    expect(await metric(1, 'mcp_tenant_in_flight_highest')).toBeGreaterThanOrEqual(4);
    expect(await metric(0, 'mcp_tenant_limit', 'limit="TENANT_MAX_IN_FLIGHT"')).toBe(4);
    expect(await metric(0, 'mcp_tenant_refusals_total', 'tenant_in_flight_limit')).toBe(1);
    // A sync tool creates nothing and is never refused.
    const sync = await rpc(
      remote(replicas[0]!.url),
      'tools/call',
      { name: 'greet', arguments: { name: 'Ada' } },
      { as: 'eve' },
    );
    expect(sync.status).toBe(200);

    // One task finishes (cancelled: nobody held it): after the next count, one more fits.
    const first = await db
      .selectFrom('tasks')
      .select('id')
      .where('tenant', '=', 'globex')
      .executeTakeFirst();
    const cancel = await rpc(
      remote(replicas[0]!.url),
      'tasks/cancel',
      { taskId: first!.id },
      { as: 'eve' },
    );
    expect(cancel.status).toBe(200);
    await sleep(1_100);
    expect((await create(0, { as: 'eve' })).result.taskId).toBeDefined();
    expect(reasonOf(await create(0, { as: 'eve' }))).toBe('tenant_in_flight_limit');
  });
});
