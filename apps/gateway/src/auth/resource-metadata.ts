import type { ResourceMetadataConfig } from '../env.js';

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The wire shape of RFC 9728 §2 (the fields this server has something to say about). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name: string;
}

/**
 * RFC 9728 §3.1: the well-known segment goes between the host and the resource's path, so
 * `https://h/mcp` has its metadata at `https://h/.well-known/oauth-protected-resource/mcp`.
 */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${RESOURCE_METADATA_PATH}${path}`;
}

/** The local paths this gateway answers the metadata on: the root one, `/mcp`'s, the resource's. */
export function resourceMetadataPaths(resource: string): string[] {
  const own = new URL(resourceMetadataUrl(resource)).pathname;
  return [...new Set([RESOURCE_METADATA_PATH, `${RESOURCE_METADATA_PATH}/mcp`, own])];
}

export function protectedResourceMetadata(
  config: ResourceMetadataConfig,
): ProtectedResourceMetadata {
  return {
    resource: config.resource,
    authorization_servers: config.authorizationServers,
    // Omitted rather than empty when no scope is required: [] would read as "no scope exists".
    ...(config.scopesSupported.length > 0 ? { scopes_supported: config.scopesSupported } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'mcp-tasks',
  };
}
