import type { ToolDefinition } from '../tool.js';
import { generateReport } from './generate-report.js';

/** The `reports` pack. */
export const REPORT_TOOLS: readonly ToolDefinition[] = [generateReport];
