import { Redis } from 'ioredis';

/** Calls per Redis command so far (`INFO commandstats`), e.g. { evalsha: 120, xadd: 40 }. */
export async function redisCommandCalls(redisUrl: string): Promise<Record<string, number>> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return parseCommandstats(await redis.info('commandstats'));
  } finally {
    redis.disconnect();
  }
}

/** `cmdstat_<name>:calls=N,usec=…` lines → { name: N }; other lines are ignored. */
export function parseCommandstats(info: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls[match[1]!] = Number(match[2]);
  return calls;
}

/**
 * after − before per command, largest first. The counters are server-wide: on a shared Redis
 * they include other clients' commands (the bench's own INFO calls are subtracted by the caller).
 */
export function commandDeltas(
  before: Record<string, number>,
  after: Record<string, number>,
): { command: string; calls: number }[] {
  return Object.entries(after)
    .map(([command, calls]) => ({ command, calls: calls - (before[command] ?? 0) }))
    .filter((entry) => entry.calls > 0)
    .sort((a, b) => b.calls - a.calls);
}
