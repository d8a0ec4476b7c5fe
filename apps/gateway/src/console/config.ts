import { createJwtVerifier } from '../auth/jwt.js';
import type { GatewayConfig } from '../env.js';
import { createConsoleJwtLogin, type ConsoleJwtLogin } from './jwt-login.js';
import type { ConsoleOperator } from './operators.js';

/**
 * The console's credentials from the configuration: MCP_CONSOLE_TOKENS, and a JWT login when
 * MCP_AUTH=jwt and MCP_CONSOLE_ROLE_CLAIM is set. Neither: no console (undefined, /console 404).
 */
export function consoleFromConfig(
  config: Pick<GatewayConfig, 'auth' | 'consoleOperators' | 'consoleRoleClaim'>,
): { operators: ConsoleOperator[]; jwtLogin: ConsoleJwtLogin | undefined } | undefined {
  const jwtLogin =
    config.auth.mode === 'jwt' && config.consoleRoleClaim !== undefined
      ? createConsoleJwtLogin(createJwtVerifier(config.auth), config.consoleRoleClaim)
      : undefined;
  if (config.consoleOperators === undefined && jwtLogin === undefined) return undefined;
  return { operators: config.consoleOperators ?? [], jwtLogin };
}
