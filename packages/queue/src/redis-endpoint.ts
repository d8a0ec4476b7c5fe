import { DEFAULT_QUEUE_PREFIX } from './wake-up-job.js';

/** One Redis node (REDIS_URL) or the seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisEndpoint = { url: string } | { clusterNodes: readonly RedisNode[] };

export interface RedisNode {
  host: string;
  port: number;
}

export function isClusterEndpoint(
  endpoint: RedisEndpoint,
): endpoint is { clusterNodes: readonly RedisNode[] } {
  return 'clusterNodes' in endpoint;
}

/** How a log line or an error message names the endpoint (the URL with its password masked). */
export function describeRedisEndpoint(endpoint: RedisEndpoint): string {
  if (isClusterEndpoint(endpoint))
    return `REDIS_CLUSTER_NODES=${endpoint.clusterNodes.map((node) => `${node.host}:${node.port}`).join(',')}`;
  const url = URL.canParse(endpoint.url) ? new URL(endpoint.url) : undefined;
  if (url?.password) url.password = '***';
  return `REDIS_URL=${url?.toString() ?? endpoint.url}`;
}

/**
 * REDIS_CLUSTER_NODES: a comma list of `host:port` seeds (any few nodes of the cluster; the
 * client learns the rest from CLUSTER SLOTS). An IPv6 host is written in brackets: `[::1]:7000`.
 */
export function parseClusterNodes(
  value: string,
): { ok: true; nodes: RedisNode[] } | { ok: false; problem: string } {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0) return { ok: false, problem: 'lists no node (want host:port,...)' };
  const nodes: RedisNode[] = [];
  for (const entry of entries) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/@]+):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    if (match === null || port < 1 || port > 65_535)
      return { ok: false, problem: `"${entry}" is not host:port (e.g. 10.0.0.5:6379)` };
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return { ok: true, nodes };
}

/**
 * The hash tag Redis Cluster hashes instead of the whole key: the text between the first `{` and
 * the next `}`, if not empty. Keys with the same tag share a slot, so one node.
 */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return key.slice(open + 1, close);
}

/**
 * The BullMQ key prefix in effect. On a cluster every key of the queue must share one slot (BullMQ's
 * scripts touch several keys at once; Redis refuses those with CROSSSLOT otherwise), so a prefix
 * without a hash tag is wrapped in one: `mcp-tasks` becomes `{mcp-tasks}`. Every key this package
 * writes starts with the prefix, so the heartbeat and rate-limit keys land in the same slot too.
 */
export function effectivePrefix(endpoint: RedisEndpoint, prefix: string | undefined): string {
  const chosen = prefix ?? DEFAULT_QUEUE_PREFIX;
  if (!isClusterEndpoint(endpoint) || hashTagOf(chosen) !== undefined) return chosen;
  return `{${chosen}}`;
}

/**
 * The endpoint both apps read from their environment, with the same rule and the same one-line
 * problems: REDIS_URL for one node, REDIS_CLUSTER_NODES for a cluster, exactly one of them.
 */
export function redisEndpointFromEnv(env: {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES?: string | undefined;
}): { ok: true; endpoint: RedisEndpoint } | { ok: false; problem: string } {
  const { REDIS_URL: url, REDIS_CLUSTER_NODES: nodes } = env;
  if (url !== undefined && nodes !== undefined)
    return {
      ok: false,
      problem:
        'REDIS_URL / REDIS_CLUSTER_NODES: set one, not both (REDIS_URL for one Redis node, REDIS_CLUSTER_NODES for a Redis Cluster)',
    };
  if (nodes !== undefined) {
    const parsed = parseClusterNodes(nodes);
    if (!parsed.ok) return { ok: false, problem: `REDIS_CLUSTER_NODES: ${parsed.problem}` };
    return { ok: true, endpoint: { clusterNodes: parsed.nodes } };
  }
  if (url === undefined)
    return {
      ok: false,
      problem: 'REDIS_URL: required (or REDIS_CLUSTER_NODES, host:port,..., for a Redis Cluster)',
    };
  return { ok: true, endpoint: { url } };
}
