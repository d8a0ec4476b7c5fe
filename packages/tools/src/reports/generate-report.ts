import {
  acceptedField,
  defineTool,
  elicitForm,
  ErrorCode,
  ProtocolError,
  readElicitResult,
  sleep,
  type StepOutcome,
  textResult,
} from '@mcp-tasks/tool-sdk';
import type { JsonValue } from '@mcp-tasks/tool-sdk';
import { z } from 'zod';

export const REPORT_SIZES = ['small', 'medium', 'large'] as const;
export type ReportSize = (typeof REPORT_SIZES)[number];
export const REPORT_FORMATS = ['markdown', 'html'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const SECTION_COUNT: Record<ReportSize, number> = { small: 2, medium: 4, large: 6 };
const SECTION_TITLES = [
  'Summary',
  'Background',
  'Findings',
  'Analysis',
  'Recommendations',
  'Appendix',
] as const;

export const APPROVE_OUTLINE_KEY = 'approve_outline';
export const CHOOSE_FORMAT_KEY = 'choose_format';

const GenerateReportArgsSchema = z.object({ size: z.enum(REPORT_SIZES) });
type GenerateReportArgs = z.infer<typeof GenerateReportArgsSchema>;

/**
 * The checkpoint. It is read back from Postgres after a crash or a resume, so it is parsed, not
 * trusted: a checkpoint this build cannot read is an internal error (retried, then failed).
 */
const ReportStateSchema = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('outline') }),
  z.object({ phase: z.literal('awaiting_approval'), outline: z.array(z.string()).min(1) }),
  z.object({
    phase: z.literal('render'),
    outline: z.array(z.string()).min(1),
    format: z.enum(REPORT_FORMATS),
    rendered: z.array(z.string()),
  }),
]);
type ReportState = z.infer<typeof ReportStateSchema>;

function parseState(state: JsonValue): ReportState {
  const parsed = ReportStateSchema.safeParse(state);
  if (!parsed.success)
    throw new Error(`unreadable generate_report checkpoint: ${parsed.error.message}`);
  return parsed.data;
}

export function buildOutline(size: ReportSize): string[] {
  return SECTION_TITLES.slice(0, SECTION_COUNT[size]);
}

export function renderSection(
  outline: readonly string[],
  index: number,
  format: ReportFormat,
): string {
  const title = outline[index] ?? `Section ${index + 1}`;
  const body = `Section ${index + 1} of ${outline.length}: ${title.toLowerCase()} of the requested report.`;
  return format === 'html'
    ? `<section><h2>${index + 1}. ${title}</h2><p>${body}</p></section>`
    : `## ${index + 1}. ${title}\n\n${body}`;
}

function assembleReport(
  size: ReportSize,
  format: ReportFormat,
  rendered: readonly string[],
): string {
  const heading = `Report (${size})`;
  return format === 'html'
    ? `<article><h1>${heading}</h1>${rendered.join('')}</article>`
    : `# ${heading}\n\n${rendered.join('\n\n')}`;
}

function approvalRequests(size: ReportSize, outline: readonly string[]) {
  const requests = {
    [APPROVE_OUTLINE_KEY]: elicitForm(
      `Approve this outline for a ${size} report: ${outline.join(', ')}?`,
      {
        type: 'object',
        properties: { approved: { type: 'boolean' } },
        required: ['approved'],
      },
    ),
  };
  if (size !== 'large') return requests;
  return {
    ...requests,
    [CHOOSE_FORMAT_KEY]: elicitForm('Which format should the report use?', {
      type: 'object',
      properties: { format: { type: 'string', enum: [...REPORT_FORMATS] } },
      required: ['format'],
    }),
  };
}

/** Reads the answers of the approval round: a decision to stop, or the format to render in. */
function decide(
  size: ReportSize,
  responses: Record<string, Record<string, JsonValue>>,
): { kind: 'stop'; reason: string } | { kind: 'go'; format: ReportFormat } {
  const approval = readElicitResult(responses, APPROVE_OUTLINE_KEY);
  if (approval === undefined) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `${APPROVE_OUTLINE_KEY}: expected an ElicitResult`,
    );
  }
  if (approval.action !== 'accept') {
    return { kind: 'stop', reason: `Report cancelled: outline approval was ${approval.action}d` };
  }
  const approved = acceptedField(approval, 'approved', 'boolean');
  if (approved === undefined) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `${APPROVE_OUTLINE_KEY}: expected {approved: boolean}`,
    );
  }
  if (!approved) return { kind: 'stop', reason: 'Report cancelled: the outline was not approved' };
  if (size !== 'large') return { kind: 'go', format: 'markdown' };

  const choice = readElicitResult(responses, CHOOSE_FORMAT_KEY);
  if (choice === undefined) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `${CHOOSE_FORMAT_KEY}: expected an ElicitResult`,
    );
  }
  if (choice.action !== 'accept') {
    return { kind: 'stop', reason: `Report cancelled: format choice was ${choice.action}d` };
  }
  const format = acceptedField(choice, 'format', 'string');
  if (format !== 'markdown' && format !== 'html') {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `${CHOOSE_FORMAT_KEY}: expected {format: "markdown" | "html"}`,
    );
  }
  return { kind: 'go', format };
}

export const generateReport = defineTool<GenerateReportArgs>({
  name: 'generate_report',
  title: 'Generate a report',
  description:
    'Builds a report as a task: drafts an outline, asks you to approve it (and, for large reports, ' +
    'to choose a format), then renders it section by section.',
  inputSchema: {
    type: 'object',
    properties: { size: { type: 'string', enum: [...REPORT_SIZES] } },
    required: ['size'],
    additionalProperties: false,
  },
  arguments: GenerateReportArgsSchema,
  mode: 'task',
  task: {
    initialStatusMessage: 'Building the report outline',
    start: () => ({ phase: 'outline' }),
    async step(raw, args, ctx): Promise<StepOutcome> {
      const state = parseState(raw);
      switch (state.phase) {
        case 'outline': {
          await sleep(ctx.settings.reportStepMs, ctx.signal);
          const outline = buildOutline(args.size);
          return {
            kind: 'input',
            state: { phase: 'awaiting_approval', outline },
            inputRequests: approvalRequests(args.size, outline),
            statusMessage: `Outline ready (${outline.length} sections): waiting for approval`,
          };
        }
        case 'awaiting_approval': {
          const decision = decide(args.size, ctx.inputResponses);
          if (decision.kind === 'stop') return { kind: 'cancel', statusMessage: decision.reason };
          return {
            kind: 'continue',
            state: {
              phase: 'render',
              outline: state.outline,
              format: decision.format,
              rendered: [],
            },
            statusMessage: `Rendering section 1 of ${state.outline.length}`,
          };
        }
        case 'render': {
          const total = state.outline.length;
          const index = state.rendered.length;
          if (index >= total)
            throw new Error('generate_report checkpoint has nothing left to render');
          await sleep(ctx.settings.reportStepMs, ctx.signal);
          const rendered = [...state.rendered, renderSection(state.outline, index, state.format)];
          if (rendered.length < total) {
            return {
              kind: 'continue',
              state: { ...state, rendered },
              statusMessage: `Rendering section ${rendered.length + 1} of ${total}`,
            };
          }
          return {
            kind: 'complete',
            statusMessage: `Report ready: ${total} sections, ${state.format}`,
            result: textResult(assembleReport(args.size, state.format, rendered), {
              structuredContent: {
                size: args.size,
                format: state.format,
                approved: true,
                sections: total,
              },
            }),
          };
        }
      }
    },
  },
});
