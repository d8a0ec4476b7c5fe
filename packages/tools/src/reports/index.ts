import type { ToolDefinition } from '@mcp-tasks/tool-sdk';
import { generateReport } from './generate-report.js';

/** The `reports` pack. */
export const REPORT_TOOLS: readonly ToolDefinition[] = [generateReport];
