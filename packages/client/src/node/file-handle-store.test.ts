import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileHandleStore } from './file-handle-store.js';

const task = (taskId: string) => ({
  taskId,
  url: 'http://h/mcp',
  createdAt: '2026-08-01T00:00:00Z',
  answeredKeys: [],
});

describe('the file handle store', () => {
  it('keeps one file per client identity and never writes the token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'handles-'));
    const alice = new FileHandleStore('http://h/mcp', 'secret-token-a', dir);
    const bob = new FileHandleStore('http://h/mcp', 'secret-token-b', dir);
    await alice.save(task('tsk_a'));
    await bob.save(task('tsk_b'));
    expect((await alice.list()).map((t) => t.taskId)).toEqual(['tsk_a']);
    expect((await bob.list()).map((t) => t.taskId)).toEqual(['tsk_b']);
    const files = await readdir(dir);
    expect(files).toHaveLength(2);
    for (const file of files)
      expect(await readFile(join(dir, file), 'utf8')).not.toContain('secret');
  });

  it('survives concurrent saves and removes from one process, leaving no temporary files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'handles-'));
    const store = new FileHandleStore('http://h/mcp', undefined, dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.save(task(`tsk_${i}`))));
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.remove(`tsk_${i * 2}`)));
    expect((await store.list()).map((t) => t.taskId).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `tsk_${i * 2 + 1}`).sort(),
    );
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('names the file when it cannot read it instead of forgetting every task', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'handles-'));
    const store = new FileHandleStore('http://h/mcp', undefined, dir);
    await writeFile(store.path, '{ half a file');
    await expect(store.list()).rejects.toThrow(`cannot read the handle store ${store.path}`);
  });
});
