import { describe, expect, it } from 'vitest';
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  TaskStatusNotificationV2Schema,
  UpdateTaskRequestV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { buildEmptyResult } from './results.js';
import {
  buildCreateTaskResult,
  buildGetTaskResult,
  buildTaskStatusNotification,
  type TaskSnapshotInput,
} from './tasks.js';
import { serverInfo, tasksUpdateRequest } from '../test/wire-fixtures.js';

const snapshot: TaskSnapshotInput = {
  taskId: 'tsk_1',
  status: 'working',
  createdAt: '2026-08-21T10:30:00.000Z',
  lastUpdatedAt: '2026-08-21T10:30:00.000Z',
  ttlMs: null,
};

// The official client library reads what we build; a drift here breaks ext-tasks users.
describe('what we build reads with the official ext-tasks v2 schemas', () => {
  it('reads a CreateTaskResult', () => {
    expect(
      CreateTaskResultV2Schema.safeParse(buildCreateTaskResult(snapshot, serverInfo)).success,
    ).toBe(true);
  });

  it.each([
    ['working', {}],
    ['completed', { result: { content: [{ type: 'text', text: 'done' }] } }],
    ['failed', { error: { code: -32603, message: 'boom' } }],
    ['cancelled', {}],
    [
      'input_required',
      {
        inputRequests: {
          k1: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: 'ok?',
              requestedSchema: { type: 'object', properties: {} },
            },
          },
        },
      },
    ],
  ] as const)('reads a %s tasks/get result and notification', (status, extra) => {
    const s = { ...snapshot, status, ...extra } as TaskSnapshotInput;
    expect(GetTaskResultV2Schema.safeParse(buildGetTaskResult(s, serverInfo)).success).toBe(true);
    expect(
      TaskStatusNotificationV2Schema.safeParse(buildTaskStatusNotification(3, s, serverInfo))
        .success,
    ).toBe(true);
  });

  it('reads our ack and agrees on the seed tasks/update request', () => {
    expect(CancelTaskResultV2Schema.safeParse(buildEmptyResult(serverInfo)).success).toBe(true);
    expect(UpdateTaskRequestV2Schema.safeParse(tasksUpdateRequest).success).toBe(true);
  });
});
