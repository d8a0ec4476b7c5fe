import { Option, type Command } from 'commander';
import { loginWithBrowser } from '../../node/browser-login.js';
import { CredentialStore, type StoredLogin } from '../../node/credential-store.js';
import { discoverAuthorization, OAuthError, requestClientCredentialsToken } from '../../oauth.js';
import { endpointUrl, type ConnectionOptions } from '../context.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { withConnection, withJson, type LoginOptions } from '../options.js';
import { printJson } from '../output.js';

/** login and logout: OAuth credentials kept per endpoint. */
export function addLoginCommands(program: Command): void {
  withJson(withConnection(program.command('login')))
    .description(
      'log in to an endpoint with OAuth, found from its metadata: in the browser (authorization code + PKCE), or with --client-id and --client-secret; later commands use (and refresh) the token',
    )
    .addOption(new Option('--client-id <id>', 'OAuth client id').env('MCP_CLIENT_ID'))
    .addOption(
      new Option('--client-secret <secret>', 'OAuth client secret').env('MCP_CLIENT_SECRET'),
    )
    .option('--scope <scopes>', 'scopes to ask for (default: those the endpoint lists)')
    .action(async (options: LoginOptions) => {
      const url = endpointUrl(options);
      // An exported but empty MCP_CLIENT_ID / MCP_CLIENT_SECRET means unset.
      if (options.clientId === '') delete options.clientId;
      if (options.clientSecret === '') delete options.clientSecret;
      if (options.clientSecret !== undefined && options.clientId === undefined) {
        throw new CliExit(ExitCode.Usage, '--client-secret needs --client-id (or MCP_CLIENT_ID)');
      }
      const login =
        options.clientSecret === undefined
          ? await browserLogin(url, options)
          : await loginWithClientCredentials(url, {
              clientId: options.clientId ?? '',
              clientSecret: options.clientSecret,
              ...(options.scope === undefined ? {} : { scope: options.scope }),
            });
      const store = new CredentialStore(options.configDir);
      await store.save(login);
      const summary = { url, issuer: login.issuer, clientId: login.clientId, scope: login.scope };
      if (options.json) printJson({ loggedIn: true, ...summary });
      else
        process.stderr.write(
          `logged in to ${url} as client ${login.clientId} at ${login.issuer} (saved in ${store.path})\n`,
        );
    });

  withJson(withConnection(program.command('logout')))
    .description('forget the login stored for an endpoint')
    .action(async (options: ConnectionOptions) => {
      const url = endpointUrl(options);
      const removed = await new CredentialStore(options.configDir).remove(url);
      if (options.json) printJson({ url, loggedOut: removed });
      else process.stderr.write(removed ? `logged out of ${url}\n` : `no login for ${url}\n`);
    });
}

/** The browser login: the URL to open goes to stderr; the code comes back to a loopback port. */
async function browserLogin(url: string, options: LoginOptions): Promise<StoredLogin> {
  try {
    return await loginWithBrowser({
      url,
      ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      onAuthorizationUrl: (authorizationUrl) => {
        process.stderr.write(`open this URL in a browser to log in:\n  ${authorizationUrl}\n`);
      },
    });
  } catch (error) {
    if (error instanceof OAuthError) throw new CliExit(ExitCode.ServerError, error.message);
    throw error;
  }
}

/** Discovers where to log in, proves the credentials with one token, and answers what to store. */
async function loginWithClientCredentials(
  url: string,
  credentials: { clientId: string; clientSecret: string; scope?: string },
): Promise<StoredLogin> {
  let authorization;
  try {
    authorization = await discoverAuthorization(url);
  } catch (error) {
    if (error instanceof OAuthError) throw new CliExit(ExitCode.ServerError, error.message);
    throw error;
  }
  const scope = credentials.scope ?? authorization.scopesSupported.join(' ');
  let token;
  try {
    token = await requestClientCredentialsToken({ url, ...credentials, scope }, authorization);
  } catch (error) {
    if (error instanceof OAuthError) throw new CliExit(ExitCode.ServerError, error.message);
    throw error;
  }
  return {
    grant: 'client_credentials',
    url,
    issuer: authorization.issuer,
    tokenEndpoint: authorization.tokenEndpoint,
    resource: authorization.resource,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    ...(scope === '' ? {} : { scope }),
    accessToken: token.accessToken,
    ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
  };
}
