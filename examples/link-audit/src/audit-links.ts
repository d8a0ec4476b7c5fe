import {
  ErrorCode,
  ProtocolError,
  acceptedField,
  defineTool,
  elicitForm,
  readElicitResult,
  textResult,
  type JsonValue,
  type StepContext,
  type StepOutcome,
} from '@mcp-tasks/tool-sdk';
import { z } from 'zod';
import { fetchPage, type PageReport } from './fetch-page.js';

export const CONFIRM_KEY = 'confirm_audit';
export const DEFAULT_MAX_PAGES = 20;
export const DEFAULT_PAGE_TIMEOUT_MS = 10_000;

const AuditArgsSchema = z.object({
  url: z.url({ protocol: /^https?$/ }),
  maxPages: z.number().int().min(1).max(100).default(DEFAULT_MAX_PAGES),
});
type AuditArgs = z.infer<typeof AuditArgsSchema>;

const PageReportSchema = z.object({
  url: z.string(),
  status: z.number().int().nullable(),
  title: z.string(),
  words: z.number().int(),
  links: z.array(z.string()),
  problem: z.string().optional(),
});

/**
 * The checkpoint, version 1. Parsed, not trusted: it comes back from Postgres after a crash, a
 * resume, or a deploy of another release (which bumps `version` if it changes this shape).
 */
const AuditStateSchema = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('discover') }),
  z.object({ phase: z.literal('confirm'), pages: z.array(z.string()).min(1) }),
  z.object({
    phase: z.literal('check'),
    pages: z.array(z.string()).min(1),
    checked: z.array(PageReportSchema),
  }),
]);
type AuditState = z.infer<typeof AuditStateSchema>;

function parseState(state: JsonValue): AuditState {
  const parsed = AuditStateSchema.safeParse(state);
  if (!parsed.success)
    throw new Error(`unreadable audit_links checkpoint: ${parsed.error.message}`);
  return parsed.data;
}

function pageTimeoutMs(): number {
  const configured = Number(process.env.LINK_AUDIT_PAGE_TIMEOUT_MS);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_PAGE_TIMEOUT_MS;
}

/** The start page, then the links on it that stay on its origin, up to maxPages. */
export function pagesToCheck(start: string, links: readonly string[], maxPages: number): string[] {
  const origin = new URL(start).origin;
  const pages = [start];
  for (const link of links) {
    if (pages.length >= maxPages) break;
    if (new URL(link).origin === origin && !pages.includes(link)) pages.push(link);
  }
  return pages;
}

/** `step` names the request within the task: `discover`, or `page:<index>`. */
function check(url: string, step: string, ctx: StepContext): Promise<PageReport> {
  return fetchPage(url, {
    signal: ctx.signal,
    timeoutMs: pageTimeoutMs(),
    // A retried step sends the same key, so a server that dedupes sees one logical request.
    idempotencyKey: `${ctx.taskId}:${step}`,
  });
}

function summary(args: AuditArgs, checked: readonly PageReport[]) {
  const broken = checked.filter((page) => page.problem !== undefined);
  const lines = checked.map(
    (page) =>
      `- ${page.url}: ${page.problem ?? `${page.status} "${page.title}", ${page.words} words`}`,
  );
  const text = [
    `Checked ${checked.length} pages of ${args.url}: ${broken.length} broken.`,
    ...lines,
  ].join('\n');
  return textResult(text, {
    structuredContent: {
      url: args.url,
      checked: checked.length,
      broken: broken.map((page) => ({ url: page.url, problem: page.problem ?? '' })),
      pages: checked.map((page) => ({
        url: page.url,
        status: page.status,
        title: page.title,
        words: page.words,
      })),
    },
  });
}

/** Reads the confirmation round: stop (declined or not confirmed) or go. */
function confirmed(ctx: StepContext): boolean {
  const answer = readElicitResult(ctx.inputResponses, CONFIRM_KEY);
  if (answer === undefined)
    throw new ProtocolError(ErrorCode.InvalidParams, `${CONFIRM_KEY}: expected an ElicitResult`);
  if (answer.action !== 'accept') return false;
  const confirm = acceptedField(answer, 'confirm', 'boolean');
  if (confirm === undefined)
    throw new ProtocolError(ErrorCode.InvalidParams, `${CONFIRM_KEY}: expected {confirm: boolean}`);
  return confirm;
}

export const auditLinks = defineTool<AuditArgs>({
  name: 'audit_links',
  title: 'Audit the links of a site',
  description:
    'Fetches a page, lists the pages it links to on the same site, asks you to confirm, then ' +
    'checks each page (status, title, word count) and reports the broken ones.',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', format: 'uri', description: 'The start page (http or https)' },
      maxPages: { type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_MAX_PAGES },
    },
    required: ['url'],
    additionalProperties: false,
  },
  arguments: AuditArgsSchema,
  mode: 'task',
  version: 1,
  task: {
    initialStatusMessage: 'Fetching the start page',
    start: () => ({ phase: 'discover' }),
    async step(raw, args, ctx): Promise<StepOutcome> {
      const state = parseState(raw);
      switch (state.phase) {
        case 'discover': {
          const start = await check(args.url, 'discover', ctx);
          if (start.problem !== undefined) {
            return {
              kind: 'complete',
              result: textResult(`The start page ${args.url} is broken: ${start.problem}`, {
                isError: true,
              }),
            };
          }
          const pages = pagesToCheck(args.url, start.links, args.maxPages);
          return {
            kind: 'input',
            state: { phase: 'confirm', pages },
            inputRequests: {
              [CONFIRM_KEY]: elicitForm(
                `Found ${pages.length} pages on ${new URL(args.url).host}. Check them all?`,
                {
                  type: 'object',
                  properties: { confirm: { type: 'boolean', title: 'Check these pages' } },
                  required: ['confirm'],
                },
              ),
            },
            statusMessage: `Found ${pages.length} pages: waiting for confirmation`,
          };
        }
        case 'confirm': {
          if (!confirmed(ctx)) return { kind: 'cancel', statusMessage: 'Audit not confirmed' };
          return {
            kind: 'continue',
            state: { phase: 'check', pages: state.pages, checked: [] },
            statusMessage: `Checking page 1 of ${state.pages.length}`,
          };
        }
        case 'check': {
          const index = state.checked.length;
          const url = state.pages[index];
          if (url === undefined)
            throw new Error('audit_links checkpoint has nothing left to check');
          const checked = [...state.checked, await check(url, `page:${index}`, ctx)];
          if (checked.length < state.pages.length) {
            return {
              kind: 'continue',
              // PageReport is JSON by construction (strings, numbers, null, arrays).
              state: { ...state, checked: checked as unknown as JsonValue[] },
              statusMessage: `Checked ${checked.length} of ${state.pages.length} pages`,
            };
          }
          const broken = checked.filter((page) => page.problem !== undefined).length;
          return {
            kind: 'complete',
            result: summary(args, checked),
            statusMessage: `Checked ${checked.length} pages: ${broken} broken`,
          };
        }
      }
    },
  },
});
