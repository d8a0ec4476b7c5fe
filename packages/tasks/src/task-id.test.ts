import { describe, expect, it } from 'vitest';
import { isWellFormedTaskId, newTaskId } from './task-id.js';

describe('task ids', () => {
  it('carry at least 128 random bits and never repeat, across refills of the entropy buffer', () => {
    // 10,000 ids draw the 256-id buffer 40 times.
    const ids = new Set(Array.from({ length: 10_000 }, newTaskId));
    expect(ids.size).toBe(10_000);
    for (const id of [...ids].slice(0, 100)) {
      // 24 base64url characters = 144 bits.
      expect(id).toMatch(/^tsk_[A-Za-z0-9_-]{24}$/);
      expect(isWellFormedTaskId(id)).toBe(true);
    }
  });

  it('recognises malformed ids without a lookup', () => {
    for (const bad of [
      '',
      'tsk_',
      'tsk_786512e29e0d',
      'task_AAAAAAAAAAAAAAAAAAAAAAAA',
      `tsk_${'A'.repeat(80)}`,
      "tsk_AAAAAAAAAAAAAAAAAAAAAA'--",
    ]) {
      expect(isWellFormedTaskId(bad)).toBe(false);
    }
  });
});
