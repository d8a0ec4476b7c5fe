import { createHash } from 'node:crypto';

/**
 * One operator credential of MCP_CONSOLE_TOKENS: `token:tenant` sees one tenant, `token:*` every
 * tenant; a third part `:actions` also lets it cancel and answer. Separate from MCP tokens: an
 * MCP client's token never opens the console, and a console token never calls /mcp.
 */
export interface ConsoleOperator {
  /** sha256 of the token, hex: what a session cookie names (never the token itself). */
  tokenDigest: string;
  /** null: every tenant. */
  tenant: string | null;
  actions: boolean;
  /** Signs this operator's sessions: derived from the token (secret), never from its digest. */
  sessionKey: Buffer;
  /** Who the audit trail names: the scope and the first 8 hex digits of the token's digest. */
  actor: string;
}

export const MIN_CONSOLE_TOKEN_LENGTH = 16;

export function digestToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function parseConsoleTokens(value: string): {
  operators: ConsoleOperator[];
  problems: string[];
} {
  const operators: ConsoleOperator[] = [];
  const problems: string[] = [];
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  entries.forEach((entry, index) => {
    const where = `MCP_CONSOLE_TOKENS: entry ${index + 1}`;
    const [token, tenant, flag, ...rest] = entry.split(':');
    if (token === undefined || tenant === undefined || tenant === '' || rest.length > 0) {
      problems.push(`${where} must be token:tenant, token:*, or either with :actions appended`);
      return;
    }
    if (flag !== undefined && flag !== 'actions') {
      problems.push(`${where}: the third part may only be "actions" (got "${flag}")`);
      return;
    }
    if (token.length < MIN_CONSOLE_TOKEN_LENGTH) {
      problems.push(`${where}: token is shorter than ${MIN_CONSOLE_TOKEN_LENGTH} characters`);
      return;
    }
    const tokenDigest = digestToken(token);
    const earlier = operators.findIndex((operator) => operator.tokenDigest === tokenDigest);
    if (earlier >= 0) {
      problems.push(`${where} repeats a token of an earlier entry`);
      return;
    }
    operators.push(operatorOf(token, tenant, flag === 'actions', tokenDigest.slice(0, 8)));
  });
  if (entries.length === 0) problems.push('MCP_CONSOLE_TOKENS: no token entries');
  return { operators, problems };
}

/**
 * The operator a secret credential (a console token, or a whole JWT) stands for. The session key
 * is derived from the credential itself, so a cookie or a CSRF token cannot be made without it.
 */
export function operatorOf(
  credential: string,
  tenant: string,
  actions: boolean,
  who: string,
): ConsoleOperator {
  const scope = tenant === '*' ? null : tenant;
  return {
    tokenDigest: digestToken(credential),
    tenant: scope,
    actions,
    sessionKey: Buffer.from(digestToken(`mcp-tasks console session key\0${credential}`), 'hex'),
    actor: `console:${scope ?? '*'}:${who}`,
  };
}
