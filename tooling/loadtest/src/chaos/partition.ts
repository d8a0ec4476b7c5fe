import type { TcpProxy } from '@mcp-tasks/testing';
import { pause, pickBusyWorker, targetOf, type ChaosPlan } from './plan.js';

const LINKS = ['postgres', 'redis', 'postgres+redis'] as const;

/**
 * Cut one worker (a busy one when there is one, so it holds leases) off Postgres, Redis or both
 * for twice its lease, once the link carries a connection, then heal. Each worker reaches both
 * through TCP proxies of its own (`startStack`'s `workerConnections`): a cut resets every open
 * connection and refuses new ones, as a partition with resets would; the rest of the stack keeps
 * its links.
 */
export const partition: ChaosPlan = {
  name: 'partition',
  needs: ['worker-links'],
  everyMs: 3_000,
  async round(ctx, record) {
    const worker = pickBusyWorker(ctx);
    const target = targetOf(worker);
    const links = ctx.links.get(target);
    if (links === undefined) throw new Error(`partition: ${target} has no links of its own`);
    const link = ctx.rng.pick(LINKS);
    const proxies: TcpProxy[] =
      link === 'postgres+redis' ? [links.postgres, links.redis] : [links[link]];
    const open = () => proxies.reduce((n, p) => n + p.openConnections(), 0);
    const accepted = () => proxies.reduce((n, p) => n + p.acceptedConnections(), 0);
    // A link with no connection open has nothing to cut: right after a Postgres restart (the
    // plan before this one) the worker reopens its pool only when it next needs it. Wait for
    // it, at most a lease; a worker still not connected by then is cut as it is.
    const connectedBy = performance.now() + ctx.leaseMs;
    while (open() === 0 && performance.now() < connectedBy) await pause(50);
    const openBefore = open();
    for (const proxy of proxies) {
      proxy.refuse();
      proxy.cut();
    }
    const acceptedAtCut = accepted();
    record('cut', target, { link, connectionsReset: openBefore, openAfterCut: open() });
    await pause(ctx.leaseMs * 2);
    for (const proxy of proxies) proxy.heal();
    // Connection attempts the worker made while cut off (each refused): it noticed, and retried.
    record('heal', target, { link, refusedWhileCut: accepted() - acceptedAtCut });
  },
};
