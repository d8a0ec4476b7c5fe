import {
  createTestDatabase,
  createTestRedis,
  freePort,
  launchGateway,
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
} from '@mcp-tasks/testing';

export const SCOPE = 'mcp:tasks';

export interface OAuthGateway {
  idp: AuthorizationServer;
  /** The gateway's /mcp: also the resource its tokens are issued for. */
  mcpUrl: string;
  close(): Promise<void>;
}

/**
 * A real authorization server (oidc-provider) and a real gateway that knows only its issuer, on a
 * database and Redis prefix of their own: the setup of the OAuth client tests.
 */
export async function startOAuthGateway(
  label: string,
  idpOptions: Omit<AuthorizationServerOptions, 'resources'>,
): Promise<OAuthGateway> {
  const port = await freePort();
  const mcpUrl = `http://127.0.0.1:${port}/mcp`;
  const idp = await startAuthorizationServer({
    ...idpOptions,
    resources: { [mcpUrl]: { scope: SCOPE } },
  });
  const database = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  // The port is chosen first: the authorization server issues tokens for this gateway's /mcp.
  const { process: gateway } = await launchGateway({
    port,
    env: {
      DATABASE_URL: database.connectionString,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      MCP_MIGRATE_ON_START: 'true',
      MCP_AUTH: 'jwt',
      MCP_JWT_ISSUER: idp.issuer,
      MCP_JWT_AUDIENCE: mcpUrl,
      MCP_JWT_REQUIRED_SCOPE: SCOPE,
      REQUEST_STATE_SECRET: 'client-oauth-request-state-secret-0123456789',
    },
    readyPath: '/readyz',
    readyTimeoutMs: 60_000,
  });
  return {
    idp,
    mcpUrl,
    async close() {
      await gateway.stop(5_000);
      await idp.close();
      await redis.deleteKeys();
      await database.drop();
    },
  };
}
