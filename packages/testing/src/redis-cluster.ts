import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/**
 * A real Redis Cluster on this machine: three masters and three replicas, each its own
 * `redis-server --cluster-enabled yes` on a free port, joined by `redis-cli --cluster create`.
 * Nothing is shared with the Redis on :6379, so a test may kill a master.
 */
export interface RedisCluster {
  /** `host:port` of every node, the form REDIS_CLUSTER_NODES takes. */
  nodes: string[];
  /** REDIS_CLUSTER_NODES for the apps: the nodes, comma-separated. */
  nodesSetting: string;
  /** The masters now, as CLUSTER NODES reports them. */
  masters(): Promise<string[]>;
  /**
   * SIGKILLs the master that holds `key`'s slot (the one a tagged queue lives on) and resolves
   * once its replica was promoted and the cluster answers `cluster_state:ok` again.
   */
  killMasterOf(key: string): Promise<{ killed: string; promoted: string }>;
  /** SIGKILLs a master (the first by default) without waiting for the failover. */
  killMaster(node?: string): Promise<string>;
  /**
   * Starts a killed node again on its port and cluster config: it rejoins as a replica of the
   * master that took its slots. Resolves once every replica is in sync, so a later kill can fail
   * over again.
   */
  revive(node: string): Promise<void>;
  /** Resolves when every live node reports cluster_state:ok and no slot is served by a dead node. */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /**
   * cluster-node-timeout: how long a master may not answer before its replica takes over.
   * Redis's default is 15 s; tests want a failover within seconds.
   */
  nodeTimeoutMs?: number;
}

const BINARIES = ['redis-server', 'redis-cli'] as const;

/** Why a private Redis Cluster cannot be started here, or null when it can. */
export function redisClusterUnavailableReason(): string | null {
  for (const binary of BINARIES) {
    const found = spawnSync(binary, ['--version'], { stdio: 'ignore' });
    if (found.error !== undefined || found.status !== 0)
      return `${binary} is not installed (Debian: apt-get install redis-server)`;
  }
  return null;
}

async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

/**
 * The local ports the kernel hands to outgoing connections (Linux); the IANA range elsewhere. A
 * node's port must lie outside it: a killed master's port (or its bus port) is otherwise free for
 * the next connect() of any process here, and the node then cannot be started again on it.
 */
export function ephemeralPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low!, high: high! };
  } catch {
    // not Linux
  }
  return { low: 49_152, high: 65_535 };
}

/**
 * A free port whose cluster bus port (port + 10000) is free too, both below the ephemeral range
 * (so no outgoing connection takes them while the node is down); random, so runs side by side
 * rarely try the same one.
 */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  const highest = ephemeralPortRange().low - 10_001;
  const lowest = 10_000;
  if (highest <= lowest)
    throw new Error('no room below the ephemeral port range for cluster ports');
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = lowest + Math.floor(Math.random() * (highest - lowest));
    if (taken.has(port)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10_000))) return port;
  }
  throw new Error('no free port pair (port and port + 10000) for a cluster node');
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${output}`)),
    );
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface NodeLine {
  address: string;
  flags: string[];
  slots: string[];
}

function servesSlot(line: NodeLine, slot: number): boolean {
  return line.slots.some((range) => {
    const [from, to] = range.split('-').map(Number);
    return slot >= from! && slot <= (to ?? from)!;
  });
}

function parseClusterNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const fields = line.split(' ');
      return {
        address: fields[1]!.split('@')[0]!,
        flags: fields[2]!.split(','),
        slots: fields.slice(8),
      };
    });
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpt-redis-cluster-'));
  const cluster = new ClusterNodes(dir, options.nodeTimeoutMs ?? 1_000);
  const taken = new Set<number>();
  try {
    for (let index = 0; index < 6; index++) {
      const port = await freeClusterPort(taken);
      taken.add(port);
      cluster.start(port);
    }
    const nodes = cluster.all();
    for (const node of nodes) await cluster.waitForPing(node);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes,
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    await cluster.waitUntilHealthy();
    await cluster.waitForReplicasInSync();
  } catch (error) {
    await cluster.stop();
    throw error;
  }

  const nodes = cluster.all();
  return {
    nodes,
    nodesSetting: nodes.join(','),
    masters: () => cluster.masters(),
    killMaster: (node) => cluster.killMaster(node),
    killMasterOf: (key) => cluster.killMasterOf(key),
    revive: (node) => cluster.revive(node),
    waitUntilHealthy: (timeoutMs) => cluster.waitUntilHealthy(timeoutMs),
    stop: () => cluster.stop(),
  };
}

/** The cluster's `redis-server` processes, by `host:port`, and which of them were killed. */
class ClusterNodes {
  private readonly servers = new Map<string, ChildProcess>();
  private readonly dead = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly nodeTimeoutMs: number,
  ) {}

  all(): string[] {
    return [...this.servers.keys()];
  }

  private live(): string[] {
    return [...this.servers.keys()].filter((node) => !this.dead.has(node));
  }

  start(port: number): void {
    this.servers.set(`127.0.0.1:${port}`, spawnNode(this.dir, port, this.nodeTimeoutMs));
  }

  async stop(): Promise<void> {
    for (const child of this.servers.values()) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    }
    this.servers.clear();
    await rm(this.dir, { recursive: true, force: true });
  }

  async waitForPing(node: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await ask(node, 'PING');
        return;
      } catch (error) {
        // A node that exited (its port taken, say) never answers: say why from its log.
        const child = this.servers.get(node);
        const exited = child !== undefined && (child.exitCode ?? child.signalCode) !== null;
        if (exited || Date.now() > deadline) {
          const log = await readFile(
            join(this.dir, `redis-${node.split(':')[1]}.log`),
            'utf8',
          ).catch(() => '');
          const tail = log.trim().split('\n').slice(-3).join(' | ');
          throw new Error(
            `Redis Cluster node ${node} ${exited ? 'exited' : 'did not answer in 10 s'}: ${(error as Error).message}; log: ${tail}`,
          );
        }
        await sleep(50);
      }
    }
  }

  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const states = await Promise.all(this.live().map((node) => ask(node, 'CLUSTER', 'INFO')));
        const table = parseClusterNodes(await ask(this.live()[0]!, 'CLUSTER', 'NODES'));
        const servingDead = table.some(
          (line) =>
            line.flags.includes('master') &&
            line.slots.length > 0 &&
            (line.flags.includes('fail') || this.dead.has(line.address)),
        );
        if (states.every((info) => info.includes('cluster_state:ok')) && !servingDead) return;
        last = states.find((info) => !info.includes('cluster_state:ok')) ?? 'a master is failed';
      } catch (error) {
        last = (error as Error).message;
      }
      await sleep(100);
    }
    throw new Error(`the Redis Cluster did not become healthy in ${timeoutMs} ms: ${last}`);
  }

  // A replica that never finished its first sync cannot take over: wait for every link.
  async waitForReplicasInSync(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const infos = await Promise.all(
          this.live().map((node) => ask(node, 'INFO', 'replication')),
        );
        const replicas = infos.filter((info) => info.includes('role:slave'));
        if (
          replicas.length === 3 &&
          replicas.every((info) => info.includes('master_link_status:up'))
        )
          return;
        last = `${replicas.length} replicas, not all linked`;
      } catch (error) {
        // A node busy with a sync (or a loaded machine) may miss one 1 s connect: ask again.
        last = (error as Error).message;
      }
      if (Date.now() > deadline)
        throw new Error(`the cluster's replicas did not sync in ${timeoutMs} ms: ${last}`);
      await sleep(100);
    }
  }

  // Each node's own line ("myself") is authoritative; another node's view may lag the gossip.
  private async selfViews(): Promise<NodeLine[]> {
    return Promise.all(
      this.live().map(async (node) => {
        const table = parseClusterNodes(await ask(node, 'CLUSTER', 'NODES'));
        return { ...table.find((line) => line.flags.includes('myself'))!, address: node };
      }),
    );
  }

  async masters(): Promise<string[]> {
    return (await this.selfViews())
      .filter((line) => line.flags.includes('master') && line.slots.length > 0)
      .map((line) => line.address);
  }

  private async masterOfSlot(slot: number): Promise<string | undefined> {
    return (await this.selfViews()).find(
      (line) => line.flags.includes('master') && servesSlot(line, slot),
    )?.address;
  }

  async killMaster(node?: string): Promise<string> {
    const target = node ?? (await this.masters())[0]!;
    const child = this.servers.get(target);
    if (child === undefined) throw new Error(`${target} is not a node of this cluster`);
    this.dead.add(target);
    child.kill('SIGKILL');
    await once(child, 'exit');
    return target;
  }

  async killMasterOf(key: string): Promise<{ killed: string; promoted: string }> {
    const slot = Number(await ask(this.live()[0]!, 'CLUSTER', 'KEYSLOT', key));
    const owner = await this.masterOfSlot(slot);
    if (owner === undefined) throw new Error(`no master serves slot ${slot}`);
    const killed = await this.killMaster(owner);
    await this.waitUntilHealthy();
    return { killed, promoted: (await this.masterOfSlot(slot)) ?? 'none' };
  }

  async revive(node: string): Promise<void> {
    if (!this.dead.has(node)) throw new Error(`${node} is not a killed node of this cluster`);
    this.servers.set(node, spawnNode(this.dir, Number(node.split(':')[1]), this.nodeTimeoutMs));
    this.dead.delete(node);
    await this.waitForPing(node);
    await this.waitUntilHealthy();
    await this.waitForReplicasInSync();
  }
}

/** One command to one node on a connection of its own (no retries, a 1 s connect). */
async function ask(node: string, ...command: string[]): Promise<string> {
  const [host, port] = node.split(':');
  const client = new Redis({
    host,
    port: Number(port),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return String(await client.call(command[0]!, ...command.slice(1)));
  } finally {
    client.disconnect();
  }
}

function spawnNode(dir: string, port: number, nodeTimeoutMs: number): ChildProcess {
  return spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      // A replica is synced at once (not 5 s later), so a master killed early can fail over.
      '--repl-diskless-sync-delay',
      '0',
      '--logfile',
      join(dir, `redis-${port}.log`),
    ],
    { stdio: 'ignore' },
  );
}
