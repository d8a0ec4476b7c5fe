import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HandleStore, StoredTask } from '../handle-store.js';

interface StoreFile {
  version: 1;
  url: string;
  tasks: Record<string, StoredTask>;
}

/** `$MCP_TASKS_STATE_DIR`, else `$XDG_STATE_HOME/mcp-tasks`, else `~/.local/state/mcp-tasks`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCP_TASKS_STATE_DIR) return env.MCP_TASKS_STATE_DIR;
  const base = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'mcp-tasks');
}

/**
 * One JSON file per client identity (endpoint + credential, hashed: the token itself is never
 * written). Every write goes to a temporary file that is renamed over the old one, so a process
 * killed mid-write leaves the previous version, never half a file. Writes from one process are
 * serialized; two processes of the same identity writing at once keep the last write.
 */
export class FileHandleStore implements HandleStore {
  readonly path: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly url: string,
    identity: string | undefined,
    readonly dir: string = defaultStateDir(),
  ) {
    const digest = createHash('sha256')
      .update(`${url}\n${identity ?? ''}`)
      .digest('hex')
      .slice(0, 24);
    this.path = join(dir, `handles-${digest}.json`);
  }

  async list(): Promise<StoredTask[]> {
    await this.queue;
    return Object.values((await this.read()).tasks);
  }

  save(task: StoredTask): Promise<void> {
    return this.change((file) => {
      file.tasks[task.taskId] = task;
    });
  }

  remove(taskId: string): Promise<void> {
    return this.change((file) => {
      delete file.tasks[taskId];
    });
  }

  private change(edit: (file: StoreFile) => void): Promise<void> {
    const next = this.queue.then(async () => {
      const file = await this.read();
      edit(file);
      await this.write(file);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<StoreFile> {
    try {
      const parsed = JSON.parse(await readFile(this.path, 'utf8')) as StoreFile;
      if (parsed.version === 1 && typeof parsed.tasks === 'object') return parsed;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new Error(`cannot read the handle store ${this.path}: ${(error as Error).message}`);
      }
    }
    return { version: 1, url: this.url, tasks: {} };
  }

  private async write(file: StoreFile): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, this.path);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }
}
