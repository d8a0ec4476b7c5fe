import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TokenSource } from '../client.js';
import {
  OAuthError,
  postTokenRequest,
  requestClientCredentialsToken,
  type AccessToken,
  type AuthorizationInfo,
  type TokenResponse,
} from '../oauth.js';

/** How `mcp-tasks login` logged in to one endpoint: enough to get the next token alone. */
export interface StoredLogin {
  /** client_credentials keeps the secret; authorization_code (browser login) a refresh token. */
  grant: 'client_credentials' | 'authorization_code';
  url: string;
  issuer: string;
  tokenEndpoint: string;
  resource: string;
  clientId: string;
  clientSecret?: string;
  refreshToken?: string;
  scope?: string;
  accessToken?: string;
  /** Epoch ms. */
  expiresAt?: number;
}

interface CredentialsFile {
  version: 1;
  logins: Record<string, StoredLogin>;
}

/** `$MCP_TASKS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcp-tasks`, else `~/.config/mcp-tasks`. */
export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCP_TASKS_CONFIG_DIR) return env.MCP_TASKS_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'mcp-tasks');
}

/**
 * `credentials.json` in the config directory, mode 600 in a 700 directory: it holds client
 * secrets and tokens. Written to a temporary file then renamed, so a crash never leaves half.
 */
export class CredentialStore {
  readonly path: string;

  constructor(readonly dir: string = defaultConfigDir()) {
    this.path = join(dir, 'credentials.json');
  }

  private async read(): Promise<CredentialsFile> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as CredentialsFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, logins: {} };
      throw error;
    }
  }

  private async write(file: CredentialsFile): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600);
    await rename(temporary, this.path);
  }

  async get(url: string): Promise<StoredLogin | undefined> {
    return (await this.read()).logins[url];
  }

  async save(login: StoredLogin): Promise<void> {
    const file = await this.read();
    file.logins[login.url] = login;
    await this.write(file);
  }

  /** True when there was a login to forget. */
  async remove(url: string): Promise<boolean> {
    const file = await this.read();
    if (file.logins[url] === undefined) return false;
    delete file.logins[url];
    await this.write(file);
    return true;
  }
}

/** The login's authorization details, as `requestClientCredentialsToken` takes them. */
export function authorizationOf(
  login: StoredLogin,
): Pick<AuthorizationInfo, 'tokenEndpoint' | 'resource' | 'scopesSupported'> {
  return {
    tokenEndpoint: login.tokenEndpoint,
    resource: login.resource,
    scopesSupported: login.scope === undefined ? [] : login.scope.split(' '),
  };
}

/**
 * A token source from a stored login: the stored token while it is good, else a new one from the
 * token endpoint, saved back so the next command reuses it.
 */
export function storedLoginTokenSource(
  store: CredentialStore,
  login: StoredLogin,
  refreshMarginMs = 30_000,
): TokenSource {
  let current = login;
  let pending: Promise<StoredLogin> | undefined;
  return async ({ rejected }) => {
    const token = current.accessToken;
    if (
      token !== undefined &&
      token !== rejected &&
      (current.expiresAt === undefined || current.expiresAt - refreshMarginMs > Date.now())
    ) {
      return token;
    }
    pending ??= nextToken(current)
      .then(async (fresh: TokenResponse) => {
        const { expiresAt: _old, ...rest } = current;
        const next: StoredLogin = { ...rest, accessToken: fresh.accessToken };
        if (fresh.expiresAt !== undefined) next.expiresAt = fresh.expiresAt;
        // Providers that rotate refresh tokens invalidate the old one with this answer.
        if (fresh.refreshToken !== undefined) next.refreshToken = fresh.refreshToken;
        await store.save(next);
        return next;
      })
      .finally(() => (pending = undefined));
    current = await pending;
    return current.accessToken;
  };
}

/** A new token for a stored login: client credentials again, or the refresh token. */
async function nextToken(login: StoredLogin): Promise<TokenResponse | AccessToken> {
  if (login.grant === 'client_credentials') {
    return requestClientCredentialsToken(
      {
        url: login.url,
        clientId: login.clientId,
        clientSecret: login.clientSecret ?? '',
        ...(login.scope === undefined ? {} : { scope: login.scope }),
      },
      authorizationOf(login),
    );
  }
  if (login.refreshToken === undefined) {
    throw new OAuthError(`the login to ${login.url} has expired and holds no refresh token`);
  }
  return postTokenRequest(
    login.tokenEndpoint,
    new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: login.refreshToken,
      client_id: login.clientId,
      resource: login.resource,
    }),
  );
}
