// A tool pack for MCP_TOOL_MODULES: the worker and the gateway import this module and read `tools`.
import { transferFunds } from './transfer-funds.js';

export const tools = [transferFunds];
export { MAX_TRANSFERS, transferFunds, type Transfer } from './transfer-funds.js';
export { LEDGER_SCHEMA_SQL, createLedgerSchema, openAccounts, type Queryable } from './schema.js';
