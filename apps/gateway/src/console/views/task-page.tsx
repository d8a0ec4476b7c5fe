/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { TaskEvent } from '@mcp-tasks/store';
import type { JsonObject, Task } from '@mcp-tasks/tasks';
import type { ConsoleSession } from '../session.js';
import { Layout, StatusBadge, json } from './layout.js';

function fieldsOf(request: JsonObject): [string, JsonObject][] {
  const params = request.params as JsonObject | undefined;
  const schema = params?.requestedSchema as JsonObject | undefined;
  const properties = (schema?.properties ?? {}) as Record<string, JsonObject>;
  return Object.entries(properties);
}

const AnswerField: FC<{ inputKey: string; name: string; schema: JsonObject }> = ({
  inputKey,
  name,
  schema,
}) => {
  const id = `f-${inputKey}-${name}`;
  const label = typeof schema.title === 'string' ? schema.title : name;
  const fieldName = `field.${name}`;
  if (Array.isArray(schema.enum))
    return (
      <p>
        <label for={id}>{label}</label>
        <select id={id} name={fieldName}>
          {schema.enum.map((option) => {
            const text = typeof option === 'string' ? option : JSON.stringify(option);
            return <option value={text}>{text}</option>;
          })}
        </select>
      </p>
    );
  if (schema.type === 'boolean')
    return (
      <p>
        <label>
          <input type="checkbox" name={fieldName} value="true" /> {label}
        </label>
      </p>
    );
  const numeric = schema.type === 'number' || schema.type === 'integer';
  return (
    <p>
      <label for={id}>{label}</label>
      <input
        id={id}
        name={fieldName}
        type={numeric ? 'number' : 'text'}
        step={schema.type === 'number' ? 'any' : undefined}
      />
    </p>
  );
};

/** What the task is: tool, owner, times, attempts, lease, cancel. */
const TaskFacts: FC<{ task: Task }> = ({ task }) => (
  <dl class="facts">
    <dt>Tool</dt>
    <dd>{task.operation.toolName}</dd>
    <dt>Tenant / principal</dt>
    <dd>
      {task.owner.tenant} / {task.owner.principal}
    </dd>
    <dt>Message</dt>
    <dd>{task.statusMessage ?? '—'}</dd>
    <dt>Created</dt>
    <dd>{task.createdAt.toISOString()}</dd>
    <dt>Last updated</dt>
    <dd>{task.lastUpdatedAt.toISOString()}</dd>
    <dt>TTL / poll interval</dt>
    <dd>
      {task.ttlMs === null ? 'none' : `${task.ttlMs} ms`} / {task.pollIntervalMs ?? '—'} ms
    </dd>
    <dt>Attempts / failures</dt>
    <dd>
      {task.attempts} / {task.failures}
    </dd>
    <dt>Lease</dt>
    <dd>
      {task.lease === null
        ? 'not held'
        : `${task.lease.owner} (epoch ${task.lease.epoch}, until ${task.lease.expiresAt.toISOString()})`}
    </dd>
    <dt>Cancel requested</dt>
    <dd>{task.cancelRequestedAt?.toISOString() ?? 'no'}</dd>
  </dl>
);

/** Each outstanding input request: a form to answer it (with :actions), else its JSON. */
const InputRequests: FC<{ session: ConsoleSession; task: Task }> = ({ session, task }) => {
  const canAct = session.operator.actions;
  if (Object.keys(task.inputRequests).length === 0) return null;
  return (
    <>
      <h2>Outstanding input</h2>
      {Object.entries(task.inputRequests).map(([key, request]) => {
        const message = (request.params as JsonObject | undefined)?.message;
        return (
          <section class="input-request" data-input-key={key}>
            <h3>
              <code>{key}</code>
            </h3>
            {typeof message === 'string' ? <p>{message}</p> : null}
            {canAct ? (
              <form method="post" action={`/console/tasks/${task.id}/answer`} class="stack">
                <input type="hidden" name="_csrf" value={session.csrfToken} />
                <input type="hidden" name="key" value={key} />
                {fieldsOf(request).map(([name, schema]) => (
                  <AnswerField inputKey={key} name={name} schema={schema} />
                ))}
                <div>
                  <button type="submit" name="action" value="accept">
                    Answer
                  </button>{' '}
                  <button type="submit" name="action" value="decline">
                    Decline
                  </button>
                </div>
              </form>
            ) : (
              <pre>{json(request)}</pre>
            )}
          </section>
        );
      })}
    </>
  );
};

/** The task's history, filterable in the page. */
const HistoryTable: FC<{ events: TaskEvent[] }> = ({ events }) => (
  <>
    <h2>History</h2>
    <label>
      Filter events <input id="history-filter" type="search" placeholder="e.g. claimed" />
    </label>
    <div class="scroll">
      <table id="history">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">At</th>
            <th scope="col">Event</th>
            <th scope="col">By</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr data-kind={event.kind}>
              <td>{event.id}</td>
              <td>{event.at.toISOString()}</td>
              <td>
                <span class={`event event-${event.kind}`}>{event.kind}</span>
              </td>
              <td>{event.actor ?? ''}</td>
              <td>
                <code>
                  {Object.keys(event.data).length === 0 ? '' : JSON.stringify(event.data)}
                </code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  </>
);

export const TaskPage: FC<{
  session: ConsoleSession;
  task: Task;
  events: TaskEvent[];
  notice?: string;
}> = ({ session, task, events, notice }) => {
  const active = task.status === 'working' || task.status === 'input_required';
  const canAct = session.operator.actions;
  return (
    <Layout title={`Task ${task.id.slice(0, 12)}`} session={session}>
      <div id="task-main" data-task-id={task.id}>
        <h1>
          Task <code>{task.id}</code> <StatusBadge status={task.status} />
        </h1>
        {notice === undefined ? null : (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <TaskFacts task={task} />
        {canAct && active && task.cancelRequestedAt === null ? (
          <form method="post" action={`/console/tasks/${task.id}/cancel`} class="inline">
            <input type="hidden" name="_csrf" value={session.csrfToken} />
            <button type="submit" class="danger">
              Cancel this task
            </button>
          </form>
        ) : null}
        <h2>Arguments</h2>
        <pre>{json(task.operation.arguments)}</pre>
        {task.result === null ? null : (
          <>
            <h2>Result</h2>
            <pre>{json(task.result)}</pre>
          </>
        )}
        {task.error === null ? null : (
          <>
            <h2>Error</h2>
            <pre>{json(task.error)}</pre>
          </>
        )}
        <InputRequests session={session} task={task} />
        <HistoryTable events={events} />
      </div>
    </Layout>
  );
};
