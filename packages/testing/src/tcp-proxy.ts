import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';

/**
 * What the proxy does with traffic:
 * - `forward`: pass bytes both ways (the healthy network);
 * - `refuse`: reset every new connection at once (a server that is down: ECONNRESET);
 * - `blackhole`: accept new connections and drop every byte, on new and open connections alike
 *   (a partition or a dead host: the peer only notices through its own timeouts);
 * - `hold-replies`: pass the client's bytes on, keep the server's, in order, until `heal`
 *   delivers them (a link whose answers come late: the server has acted on a request whose
 *   reply the client has not seen yet).
 */
export type TcpProxyMode = 'forward' | 'refuse' | 'blackhole' | 'hold-replies';

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  readonly mode: TcpProxyMode;
  /** `url` with its host and port replaced by the proxy's (e.g. a DATABASE_URL or REDIS_URL). */
  urlFor(url: string): string;
  /** Resets every open connection, both sides; new connections follow the mode. */
  cut(): void;
  refuse(): void;
  blackhole(): void;
  holdReplies(): void;
  /**
   * Back to `forward`; connections opened in a black hole start passing bytes again, and the
   * replies held are delivered.
   */
  heal(): void;
  /**
   * New connections go to this target from now on (the DNS name or virtual IP a managed database
   * moves at a failover); open ones stay where they are until cut.
   */
  retarget(target: TcpProxyOptions['target']): void;
  /** Connections open through the proxy right now. */
  openConnections(): number;
  /** Connections accepted since the start, whatever became of them. */
  acceptedConnections(): number;
  close(): Promise<void>;
}

export interface TcpProxyOptions {
  /**
   * Where to forward: a host and port, or a URL to take them from; or several, each new
   * connection going to the next in turn (a reader endpoint's round robin over replicas).
   */
  target: TcpTarget | readonly TcpTarget[];
  /** Default 127.0.0.1. */
  listenHost?: string;
  /** Default 0 (an ephemeral port). */
  listenPort?: number;
}

type TcpTarget = { host: string; port: number } | string;

interface Pair {
  client: Socket;
  upstream: Socket;
  /** The server's bytes kept while replies are held, in order. */
  heldReplies: Buffer[];
}

function targetOf(target: TcpTarget): { host: string; port: number } {
  if (typeof target !== 'string') return target;
  const url = new URL(target);
  return { host: url.hostname, port: Number(url.port) };
}

function targetsOf(target: TcpProxyOptions['target']): { host: string; port: number }[] {
  const list: readonly TcpTarget[] = Array.isArray(target) ? target : [target as TcpTarget];
  if (list.length === 0) throw new Error('a TCP proxy needs at least one target');
  return list.map(targetOf);
}

/**
 * A fault-injecting TCP proxy for tests: put it between a process and a server (Postgres, Redis)
 * and cut, refuse, black-hole and heal the link on demand, without touching the shared server.
 */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const state: ProxyState = {
    targets: targetsOf(options.target),
    turn: 0,
    pairs: new Set<Pair>(),
    mode: 'forward',
    accepted: 0,
  };
  const server = createServer((client) => accept(state, client));
  server.listen(options.listenPort ?? 0, options.listenHost ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  const resetAll = (): void => resetPairs(state.pairs);

  return {
    host: address.address,
    port: address.port,
    get mode() {
      return state.mode;
    },
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = address.address;
      parsed.port = String(address.port);
      return parsed.toString();
    },
    cut: resetAll,
    refuse() {
      state.mode = 'refuse';
    },
    blackhole() {
      state.mode = 'blackhole';
    },
    holdReplies() {
      state.mode = 'hold-replies';
    },
    heal() {
      state.mode = 'forward';
      for (const pair of state.pairs) {
        for (const chunk of pair.heldReplies.splice(0))
          if (!pair.client.destroyed) pair.client.write(chunk);
      }
    },
    retarget(next) {
      state.targets = targetsOf(next);
    },
    openConnections: () => state.pairs.size,
    acceptedConnections: () => state.accepted,
    async close() {
      resetAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the proxy's connections share: where new ones go, what it does now, what is open. */
interface ProxyState {
  targets: { host: string; port: number }[];
  /** New connections go to `targets[turn % targets.length]`, round robin. */
  turn: number;
  readonly pairs: Set<Pair>;
  mode: TcpProxyMode;
  accepted: number;
}

/** One accepted connection: refused, or paired with a new upstream connection and relayed. */
function accept(state: ProxyState, client: Socket): void {
  state.accepted += 1;
  if (state.mode === 'refuse') {
    client.on('error', () => undefined);
    client.resetAndDestroy();
    return;
  }
  const upstream = createConnection(state.targets[state.turn++ % state.targets.length]!);
  const pair: Pair = { client, upstream, heldReplies: [] };
  state.pairs.add(pair);
  const close = (): void => {
    if (!state.pairs.delete(pair)) return;
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) {
    socket.on('error', close);
    socket.on('close', close);
  }
  // A half-close is passed on as a full close: enough for request/response protocols.
  client.on('end', close);
  upstream.on('end', close);
  relay(state, client, upstream);
  relay(state, upstream, client, pair.heldReplies);
}

/**
 * Copies a → b while forwarding, with backpressure; drops the bytes otherwise, except the
 * server's (`held` given) while replies are held: those are kept for heal.
 */
function relay(state: ProxyState, from: Socket, to: Socket, held?: Buffer[]): void {
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed) return;
    if (held !== undefined && state.mode === 'hold-replies') {
      held.push(chunk);
      return;
    }
    if (state.mode !== 'forward' && state.mode !== 'hold-replies') return;
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
}

/** Resets every open connection, both sides. */
function resetPairs(pairs: Set<Pair>): void {
  for (const pair of [...pairs]) {
    pairs.delete(pair);
    pair.client.resetAndDestroy();
    pair.upstream.resetAndDestroy();
  }
}
