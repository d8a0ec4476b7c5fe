export * from './tool.js';
export { TOOL_PACKS, createToolCatalogue, type ToolCatalogue, type ToolPack } from './catalogue.js';
export { defineTool } from './define-tool.js';
export { elicitForm, readElicitResult, type ElicitResult } from './elicitation.js';
export { sleep } from './sleep.js';
export { textResult } from './text.js';
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
