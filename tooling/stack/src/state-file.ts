import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StackHandle } from './stack.js';

/** `.stack/state.json`: what another terminal (the demo's kill step) needs to find the stack. */
export interface StackState {
  url: string;
  databaseUrl: string;
  redisUrl: string;
  redisClusterNodes?: string;
  redisPrefix: string;
  tokens: Record<string, string>;
  processes: {
    name: string;
    role: 'gateway' | 'worker';
    pid: number | undefined;
    url?: string;
    workerId?: string;
  }[];
}

export function stackState(stack: StackHandle): StackState {
  return {
    url: stack.url,
    databaseUrl: stack.databaseUrl,
    redisUrl: stack.redisUrl,
    ...(stack.redisClusterNodes === undefined
      ? {}
      : { redisClusterNodes: stack.redisClusterNodes }),
    redisPrefix: stack.redisPrefix,
    tokens: stack.tokens,
    processes: [...stack.gateways, ...stack.workers].map((p) =>
      p.role === 'gateway'
        ? { name: p.name, role: 'gateway', pid: p.pid, url: p.url }
        : { name: p.name, role: 'worker', pid: p.pid, workerId: p.workerId },
    ),
  };
}

export async function writeStateFile(path: string, state: StackState): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(state, null, 2)}\n`);
}

export async function removeStateFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
