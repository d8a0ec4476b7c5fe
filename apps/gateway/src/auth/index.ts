import type { AuthConfig } from '../env.js';
import type { Authenticator } from './authenticator.js';
import type { ChallengeParams } from './challenge.js';
import { resourceMetadataUrl } from './resource-metadata.js';
import { createJwtAuthenticator } from './jwt.js';
import { createNoAuthenticator } from './none.js';
import { createTokenAuthenticator } from './tokens.js';

export { bearerToken, type Authenticator, type Identity } from './authenticator.js';
export { unauthorized } from './challenge.js';

/** The challenge parameters of a configuration: what a 401 tells a client about logging in. */
export function challengeParams(config: AuthConfig): ChallengeParams {
  if (config.mode !== 'jwt') return {};
  return {
    resourceMetadataUrl:
      config.resourceMetadata === undefined
        ? undefined
        : resourceMetadataUrl(config.resourceMetadata.resource),
    scope: config.requiredScopes.length > 0 ? config.requiredScopes.join(' ') : undefined,
  };
}

export function createAuthenticator(config: AuthConfig): Authenticator {
  switch (config.mode) {
    case 'none':
      return createNoAuthenticator();
    case 'tokens':
      return createTokenAuthenticator(config.tokens);
    case 'jwt':
      return createJwtAuthenticator({ ...config, challenge: challengeParams(config) });
  }
}
