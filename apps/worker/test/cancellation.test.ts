import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OWNER,
  accept,
  createHarness,
  isTerminal,
  sleep,
  type Harness,
  type WorkerProcess,
} from './harness.js';

let h: Harness;
let worker: WorkerProcess;

beforeAll(async () => {
  h = await createHarness('worker_cancel');
  // A lease (renewed every 20 s) and report steps (60 s) far longer than the 10 s deadlines below:
  // a cancel that ends a report step in time can only have arrived by push (the change feed).
  worker = await h.startWorker({ LEASE_MS: '60000', REPORT_STEP_MS: '60000' });
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('cancellation', () => {
  it('stops a working task mid-step, pushed by the change feed, and settles it cancelled', async () => {
    const created = await h.createTask('generate_report', { size: 'small' });
    await h.waitFor(created.id, (t) => t.lease !== null);
    await h.service.cancel(OWNER, created.id);
    const done = await h.waitFor(created.id, isTerminal, 10_000);
    expect(done.status).toBe('cancelled');
    expect(done.statusMessage).toBe('cancelled by request');
    expect(done.lease).toBeNull();
    expect(done.result).toBeNull();
  });

  it('re-reads a held task for its cancel only, not for the changes a listen stream hears', async () => {
    const created = await h.createTask('generate_report', { size: 'small' });
    await h.waitFor(created.id, (t) => t.lease !== null);
    const rechecks = await worker.metric('mcp_worker_feed_rechecks_total');
    // Client-visible changes of a task a stream listens to (announced to the gateways' streams).
    for (const message of ['seen by a stream', 'seen again']) {
      await h.query(
        `UPDATE tasks SET listened = true, listened_until = now() + interval '1 minute',
                          status_message = $2 WHERE id = $1`,
        [created.id, message],
      );
    }
    await h.service.cancel(OWNER, created.id);
    const done = await h.waitFor(created.id, isTerminal, 10_000);
    expect(done.status).toBe('cancelled');
    // The cancel pushed (the 60 s step ended in time) with one re-read; the two changes cost none.
    expect((await worker.metric('mcp_worker_feed_rechecks_total')) - rechecks).toBe(1);
  });

  it('cancels a task waiting for input at once, and no worker touches it afterwards', async () => {
    const created = await h.createTask('confirm_delete', { filename: 'keep.txt' });
    await h.waitFor(created.id, (t) => t.status === 'input_required');
    await h.service.cancel(OWNER, created.id);
    const done = await h.task(created.id);
    expect(done.status).toBe('cancelled');
    expect(done.inputRequests).toEqual({});
    // A late answer neither resumes nor changes it.
    await h.service.submitInputResponses(OWNER, created.id, {
      confirm_delete: accept({ confirm: true }),
    });
    await sleep(800);
    expect(await h.task(created.id)).toMatchObject({ status: 'cancelled', result: null });
  });

  it('lets either completion or cancellation win a race, and the winner stands', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const created = await h.createTask('slow_compute', { seconds: 1 });
      ids.push(created.id);
      await h.waitFor(created.id, (t) => t.lease !== null);
      // Aim at the moment the single one-second step finishes.
      await sleep(850 + i * 60);
      await h.service.cancel(OWNER, created.id);
    }
    const finals = await Promise.all(ids.map((id) => h.waitFor(id, isTerminal, 10_000)));
    for (const task of finals) {
      expect(['completed', 'cancelled']).toContain(task.status);
      if (task.status === 'completed') expect(task.result).not.toBeNull();
      else expect(task.result).toBeNull();
    }
    await sleep(500);
    const later = await Promise.all(ids.map((id) => h.task(id)));
    expect(later.map((t) => t.status)).toEqual(finals.map((t) => t.status));
  });
});
