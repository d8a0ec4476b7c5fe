import { describe, expect, it } from 'vitest';
import {
  effectivePrefix,
  hashTagOf,
  parseClusterNodes,
  redisEndpointFromEnv,
} from './redis-endpoint.js';

const cluster = { clusterNodes: [{ host: '127.0.0.1', port: 7000 }] };

describe('redisEndpointFromEnv', () => {
  it('takes REDIS_URL for one node and REDIS_CLUSTER_NODES for a cluster', () => {
    expect(redisEndpointFromEnv({ REDIS_URL: 'redis://r:6379' })).toEqual({
      ok: true,
      endpoint: { url: 'redis://r:6379' },
    });
    expect(redisEndpointFromEnv({ REDIS_CLUSTER_NODES: 'a:7000, b:7001,[::1]:7002' })).toEqual({
      ok: true,
      endpoint: {
        clusterNodes: [
          { host: 'a', port: 7000 },
          { host: 'b', port: 7001 },
          { host: '::1', port: 7002 },
        ],
      },
    });
  });

  it('refuses both at once, neither, and a node that is not host:port, in one line each', () => {
    expect(redisEndpointFromEnv({ REDIS_URL: 'redis://r', REDIS_CLUSTER_NODES: 'a:1' })).toEqual({
      ok: false,
      problem:
        'REDIS_URL / REDIS_CLUSTER_NODES: set one, not both (REDIS_URL for one Redis node, REDIS_CLUSTER_NODES for a Redis Cluster)',
    });
    expect(redisEndpointFromEnv({})).toEqual({
      ok: false,
      problem: 'REDIS_URL: required (or REDIS_CLUSTER_NODES, host:port,..., for a Redis Cluster)',
    });
    expect(redisEndpointFromEnv({ REDIS_CLUSTER_NODES: 'a:7000,redis://b:7001' })).toEqual({
      ok: false,
      problem: 'REDIS_CLUSTER_NODES: "redis://b:7001" is not host:port (e.g. 10.0.0.5:6379)',
    });
    expect(parseClusterNodes('a:70000')).toEqual({
      ok: false,
      problem: '"a:70000" is not host:port (e.g. 10.0.0.5:6379)',
    });
    expect(parseClusterNodes(' , ')).toEqual({
      ok: false,
      problem: 'lists no node (want host:port,...)',
    });
  });
});

describe('effectivePrefix', () => {
  it('keeps the prefix on one node and hash-tags an untagged one on a cluster', () => {
    expect(effectivePrefix({ url: 'redis://r' }, undefined)).toBe('mcp-tasks');
    expect(effectivePrefix({ url: 'redis://r' }, 'acme')).toBe('acme');
    expect(effectivePrefix(cluster, undefined)).toBe('{mcp-tasks}');
    expect(effectivePrefix(cluster, 'acme')).toBe('{acme}');
    expect(effectivePrefix(cluster, 'prod:{acme}')).toBe('prod:{acme}');
    // `{}` is no hash tag to Redis (it hashes the whole key), so it is wrapped too.
    expect(effectivePrefix(cluster, 'a{}b')).toBe('{a{}b}');
  });

  it('reads the hash tag as Redis does: the first {…} with something inside', () => {
    expect(hashTagOf('{mcp-tasks}:mcp-tasks-run:wait')).toBe('mcp-tasks');
    expect(hashTagOf('a{b}{c}')).toBe('b');
    expect(hashTagOf('a{}{c}')).toBeUndefined();
    expect(hashTagOf('plain')).toBeUndefined();
  });
});
