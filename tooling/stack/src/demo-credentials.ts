/**
 * DEMO VALUES, NOT SECRETS. The stack and docker compose ship these so a first run works without
 * configuration; anything reachable by others must set its own MCP_TOKENS and REQUEST_STATE_SECRET.
 */
export const DEMO_TOKENS = [
  { token: 'demo-token-alice', tenant: 'acme', principal: 'alice' },
  { token: 'demo-token-mallory', tenant: 'globex', principal: 'mallory' },
] as const;

/** `token:tenant:principal,…`, the gateway's MCP_TOKENS format. */
export const DEMO_MCP_TOKENS = DEMO_TOKENS.map((t) => `${t.token}:${t.tenant}:${t.principal}`).join(
  ',',
);

export const DEMO_REQUEST_STATE_SECRET = 'demo-request-state-secret-not-for-production';

/** The operator console's demo operator: every tenant, actions allowed (MCP_CONSOLE_TOKENS). */
export const DEMO_CONSOLE_TOKEN = 'demo-console-token-ops';
export const DEMO_CONSOLE_TOKENS = `${DEMO_CONSOLE_TOKEN}:*:actions`;

/** principal → token, read back from an MCP_TOKENS value (the demo one or the user's). */
export function tokensByPrincipal(mcpTokens: string): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const entry of mcpTokens.split(',')) {
    const [token, , principal] = entry.trim().split(':');
    if (token && principal && tokens[principal] === undefined) tokens[principal] = token;
  }
  return tokens;
}

/** `pnpm stack --oauth`: clients of the test authorization server (DEMO VALUES, NOT SECRETS). */
export const DEMO_OAUTH_CLIENTS = [
  { clientId: 'demo-client-alice', clientSecret: 'demo-secret-alice', tenant: 'acme' },
  { clientId: 'demo-client-mallory', clientSecret: 'demo-secret-mallory', tenant: 'globex' },
] as const;

export const DEMO_OAUTH_SCOPE = 'mcp:tasks';
