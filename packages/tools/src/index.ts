// The tool API itself is public in @mcp-tasks/tool-sdk; re-exported so the apps keep one import.
export * from '@mcp-tasks/tool-sdk';
export { TOOL_PACKS, createToolCatalogue, type ToolCatalogue, type ToolPack } from './catalogue.js';
export { loadToolModules, type ToolModule } from './load-modules.js';
export {
  APPROVE_OUTLINE_KEY,
  CHOOSE_FORMAT_KEY,
  REPORT_FORMATS,
  REPORT_SIZES,
  SECTION_COUNT,
  type ReportFormat,
  type ReportSize,
} from './reports/generate-report.js';
export { PROTOCOL_ERROR_JOB_ERROR } from './conformance/protocol-error-job.js';
