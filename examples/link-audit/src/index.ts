// A tool pack for MCP_TOOL_MODULES: the worker and the gateway import this module and read `tools`.
import { auditLinks } from './audit-links.js';

export const tools = [auditLinks];
export { CONFIRM_KEY, auditLinks, pagesToCheck } from './audit-links.js';
export { parsePage } from './parse-page.js';
