/** What the tool's own step threw (or its empty answer): the task's error, whatever its code. */
export class ToolStepError extends Error {
  override name = 'ToolStepError';
  constructor(readonly thrown: unknown) {
    super('the tool step threw');
  }
}
