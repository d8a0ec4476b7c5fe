import type { Authenticator } from './authenticator.js';

/** MCP_AUTH=none: every caller is the same principal; only ever chosen explicitly. */
export function createNoAuthenticator(): Authenticator {
  const identity = { tenant: 'default', principal: 'anonymous' };
  return { authenticate: () => Promise.resolve(identity) };
}
