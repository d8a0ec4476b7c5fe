import { newTaskId } from '@mcp-tasks/tasks';
import { describe, expect, it } from 'vitest';
import { startInfrastructure } from './support/harness.js';

describe('the gateway test harness', () => {
  it('deletes the Redis keys under its own prefix when a test file tears down', async () => {
    const infrastructure = await startInfrastructure('gw_cleanup');
    await infrastructure.queue.wake(newTaskId(), 'created');
    await infrastructure.queue.wake(newTaskId(), 'created');
    expect(await infrastructure.redis.countKeys()).toBeGreaterThan(0);
    await infrastructure.close();
    expect(await infrastructure.redis.countKeys()).toBe(0);
  }, 60_000);
});
