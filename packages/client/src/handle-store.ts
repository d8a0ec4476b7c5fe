/** What a client remembers about a task it started, enough to pick it up after a restart. */
export interface StoredTask {
  taskId: string;
  /** The endpoint it was created on (any replica behind it answers). */
  url: string;
  toolName?: string;
  createdAt: string;
  /** Input keys answered from here: never asked again, even on a stale snapshot. */
  answeredKeys: string[];
  lastStatus?: string;
}

/** Where handles live between runs. Implementations must make each write all-or-nothing. */
export interface HandleStore {
  list(): Promise<StoredTask[]>;
  save(task: StoredTask): Promise<void>;
  remove(taskId: string): Promise<void>;
}

/** For one process (and the browser): forgotten on exit. */
export class MemoryHandleStore implements HandleStore {
  private readonly tasks = new Map<string, StoredTask>();

  list(): Promise<StoredTask[]> {
    return Promise.resolve([...this.tasks.values()].map((t) => structuredClone(t)));
  }

  save(task: StoredTask): Promise<void> {
    this.tasks.set(task.taskId, structuredClone(task));
    return Promise.resolve();
  }

  remove(taskId: string): Promise<void> {
    this.tasks.delete(taskId);
    return Promise.resolve();
  }
}
