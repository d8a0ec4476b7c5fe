import type { AuthConfig } from '../env.js';
import type { Authenticator } from './authenticator.js';
import { createJwtAuthenticator } from './jwt.js';
import { createNoAuthenticator } from './none.js';
import { createTokenAuthenticator } from './tokens.js';

export { bearerToken, unauthorized, type Authenticator, type Identity } from './authenticator.js';

export function createAuthenticator(config: AuthConfig): Authenticator {
  switch (config.mode) {
    case 'none':
      return createNoAuthenticator();
    case 'tokens':
      return createTokenAuthenticator(config.tokens);
    case 'jwt':
      return createJwtAuthenticator(config);
  }
}
