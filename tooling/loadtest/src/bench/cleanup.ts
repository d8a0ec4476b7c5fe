import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Deletes every key under the bench's Redis prefixes (SCAN, never FLUSH: the server is shared). */
export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl);
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/**
 * Waits until no task is left running, so the next measurement does not pay for the backlog of
 * the one before (the fixed-rate create run leaves one when the service falls behind).
 */
export async function waitUntilAllTasksEnded(
  databaseUrl: string,
  timeoutMs: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    for (;;) {
      const { rows } = await client.query<{ n: string }>(
        "SELECT count(*) AS n FROM tasks WHERE status NOT IN ('completed', 'failed', 'cancelled')",
      );
      const open = Number(rows[0]?.n ?? 0);
      if (open === 0) return performance.now() - started;
      if (performance.now() - started > timeoutMs)
        throw new Error(`${open} tasks still running after ${timeoutMs} ms`);
      await sleep(200);
    }
  } finally {
    await client.end();
  }
}
