import {
  ErrorCode,
  ListToolsParamsSchema,
  ProtocolError,
  buildCallToolResult,
  buildCreateTaskResult,
  buildInputRequiredResult,
  buildListToolsResult,
  checkInputResponses,
  inputResponsesError,
  describeIssues,
  invalidParamsError,
  parseParams,
  assertTasksExtension,
  type ToolDescriptor,
} from '@mcp-tasks/protocol';
import {
  buildTaskSnapshot,
  newTaskId,
  type InputResponses,
  type JsonObject,
} from '@mcp-tasks/tasks';
import type { CallContext, ToolDefinition } from '@mcp-tasks/tools';
import { carrierOf } from '@mcp-tasks/tracing';
import { z } from 'zod';
import { LenientCallToolParamsSchema } from '../wire/lenient-params.js';
import { digestArguments, type RequestStateBinding } from '../mrtr/request-state.js';
import { result, type McpServices, type MethodHandler, type RequestContext } from './context.js';
import { createFailure } from './create-failure.js';

function describeTool(tool: ToolDefinition): ToolDescriptor {
  const descriptor: ToolDescriptor = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as ToolDescriptor['inputSchema'],
  };
  if (tool.title !== undefined) descriptor.title = tool.title;
  return descriptor;
}

/** R8: the catalogue is sorted by name and fixed at start, so every replica sends the same bytes. */
export const toolsList: MethodHandler = (ctx, services) => {
  parseParams(ListToolsParamsSchema, ctx.params);
  return Promise.resolve(
    result(
      buildListToolsResult(
        services.catalogue.list().map(describeTool),
        { ttlMs: services.settings.listTtlMs, cacheScope: 'public' },
        services.serverInfo,
      ),
    ),
  );
};

const REQUEST_STATE_PROBLEMS = {
  malformed: 'Invalid requestState: it is not a state this server issued',
  bad_signature: 'Invalid requestState: it was altered or was not issued by this server',
  expired: 'Invalid requestState: it has expired; call the tool again without requestState',
  mismatch: 'Invalid requestState: it was issued for another caller, tool or arguments',
} as const;

function parseArguments(tool: ToolDefinition, raw: Record<string, unknown>): JsonObject {
  const parsed = tool.arguments.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    ...issue,
    path: ['arguments', ...issue.path],
  }));
  throw invalidParamsError(
    describeIssues(new z.ZodError(issues)),
    `Invalid arguments for tool "${tool.name}"`,
  );
}

/** Whether this call becomes a task (R9): the server decides; the client only declares it can. */
function servesAsTask(tool: ToolDefinition, args: JsonObject, tasksDeclared: boolean): boolean {
  switch (tool.mode) {
    case 'sync':
      return false;
    case 'task':
      return true;
    case 'task-optional':
      return tasksDeclared && (tool.prefersTask?.(args) ?? true);
  }
}

/**
 * MRTR rounds before a task exists (R13). The verified state carries the requests its round
 * made: an answer that does not fit its request is -32602 (the state stays usable for a corrected
 * retry); answers to any other key are dropped, so a client cannot smuggle answers the tool never
 * requested. Returns the final arguments, or the next input_required round.
 */
function gatherInput(
  ctx: RequestContext,
  services: McpServices,
  tool: ToolDefinition,
  args: JsonObject,
  rawArguments: Record<string, unknown>,
  params: { inputResponses?: Record<string, unknown>; requestState?: string },
  call: CallContext,
): { ready: JsonObject; taskId?: string } | { round: Record<string, unknown> } {
  if (tool.gatherInput === undefined) return { ready: args };
  const binding: RequestStateBinding = {
    tenant: ctx.identity.tenant,
    principal: ctx.identity.principal,
    method: ctx.method,
    toolName: tool.name,
    argumentsDigest: digestArguments(rawArguments),
  };
  const responses: InputResponses = {};
  if (params.requestState !== undefined) {
    const verified = services.requestState.verify(params.requestState, binding);
    if (!verified.ok) {
      ctx.log.info({ reason: verified.reason, tool: tool.name }, 'rejected requestState');
      throw new ProtocolError(ErrorCode.InvalidParams, REQUEST_STATE_PROBLEMS[verified.reason]);
    }
    const sent = (params.inputResponses ?? {}) as InputResponses;
    const problems = checkInputResponses(verified.inputRequests, sent);
    if (problems.length > 0) throw inputResponsesError(problems);
    for (const key of Object.keys(verified.inputRequests)) {
      const answer = sent[key];
      if (answer !== undefined) responses[key] = answer;
    }
  }
  // Without a requestState any inputResponses are unbound to a round: start from round one.
  const outcome = tool.gatherInput(args, responses, call);
  if (outcome.kind === 'ready') {
    // After MRTR rounds the final call is repeatable: the same state and answers name one task.
    return params.requestState === undefined
      ? { ready: outcome.arguments }
      : {
          ready: outcome.arguments,
          taskId: services.requestState.deriveTaskId(params.requestState, responses),
        };
  }
  const requestState = services.requestState.issue(binding, outcome.inputRequests);
  return {
    round: buildInputRequiredResult(
      { inputRequests: outcome.inputRequests, requestState },
      services.serverInfo,
    ),
  };
}

/**
 * What a tool sees of the request. The signal is built on demand (AbortSignal.any over the
 * client's and the deadline's is dear), since only a tool that runs in the request reads it. A class, not an object literal with `get signal()`: such a literal gets a
 * hidden class of its own per request, which keeps the whole request alive until the next full
 * collection (see request-deadline.ts).
 */
class RequestCallContext implements CallContext {
  readonly tasksDeclared: boolean;
  readonly clientCapabilities: JsonObject;
  readonly #request: RequestContext;

  constructor(request: RequestContext) {
    this.#request = request;
    this.tasksDeclared = request.tasksDeclared;
    this.clientCapabilities = request.meta.clientCapabilities as JsonObject;
  }

  get signal(): AbortSignal {
    return this.#request.signal;
  }
}

export const toolsCall: MethodHandler = async (ctx, services) => {
  const params = parseParams(LenientCallToolParamsSchema, ctx.params);
  const tool = services.catalogue.get(params.name);
  if (tool === undefined) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `Unknown tool: ${JSON.stringify(params.name)}`,
    );
  }
  const rawArguments = params.arguments ?? {};
  const args = parseArguments(tool, rawArguments);
  if (tool.mode === 'task') assertTasksExtension(ctx.meta, `Tool "${tool.name}"`);
  const call = new RequestCallContext(ctx);
  const gathered = gatherInput(ctx, services, tool, args, rawArguments, params, call);
  if ('round' in gathered) return result(gathered.round);
  const finalArgs = gathered.ready;
  const taskId = gathered.taskId ?? newTaskId();

  if (servesAsTask(tool, finalArgs, ctx.tasksDeclared)) {
    // A tenant over its in-flight cap or create rate gets a 429 before anything is written.
    await services.admission.admit(ctx.identity.tenant);
    const derivedId = gathered.taskId !== undefined;
    // The request timeout stands while the create waits for its INSERT (a 504 then drops it
    // unsent); once it is taken into one the client must get the handle: a 504 after that would
    // leave a task running that nobody can see or cancel, and a retry would create a second one.
    const task = await services.taskService
      .createAndWake(
        {
          id: taskId,
          owner: ctx.identity,
          operation: { method: 'tools/call', toolName: tool.name, arguments: finalArgs },
          ttlMs: services.settings.taskTtlMs,
          pollIntervalMs: services.settings.taskPollIntervalMs,
          statusMessage: tool.task?.initialStatusMessage ?? null,
          traceContext: services.tracing ? carrierOf() : undefined,
        },
        { derivedId, onTaken: () => ctx.disarmDeadline() },
      )
      .catch((error: unknown) => {
        throw createFailure(error, derivedId);
      });
    services.metrics.tasksCreated.inc({ tool: tool.name });
    if (ctx.logs('info')) ctx.log.info({ taskId: task.id, tool: tool.name }, 'task created');
    return result(buildCreateTaskResult(buildTaskSnapshot(task), services.serverInfo));
  }
  if (tool.runSync === undefined) {
    throw new Error(`tool ${tool.name} has no synchronous execution`);
  }
  const body = await tool.runSync(finalArgs, call);
  return result(buildCallToolResult(body, services.serverInfo));
};
