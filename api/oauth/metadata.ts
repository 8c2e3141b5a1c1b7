import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { mcpResource } from '../../identity/oauth-authorize.ts';
import { AUTH_METHODS, GRANT_TYPES, SUPPORTED_SCOPES } from '../../identity/oauth-clients.ts';
import type { AppEnv } from '../env.ts';
import { openCors } from './cors.ts';

/** RFC 9728 §2 protected-resource metadata, fields as SPEC.md 4.4. */
export function protectedResourceMetadata(baseUrl: string) {
  return {
    resource: mcpResource(baseUrl),
    authorization_servers: [baseUrl],
    scopes_supported: [...SUPPORTED_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Countersign',
  };
}

/**
 * RFC 8414 §2 authorization-server metadata, fields as SPEC.md 4.4 plus revocation, RFC 9207 and
 * client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-01 §5).
 */
export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    registration_endpoint: `${baseUrl}/oauth/register`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
    jwks_uri: `${baseUrl}/.well-known/jwks.json`,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    authorization_response_iss_parameter_supported: true,
    // MCP authorization 2025-11-25 "Client ID Metadata Documents": clients use an https URL as
    // client_id only when this is true (and `none` is among the token endpoint methods above).
    client_id_metadata_document_supported: true,
  };
}

/**
 * The well-known documents; every URL in them comes from config.baseUrl. The JWKS itself is
 * api/rest/jwks.ts; the CORS middleware here covers it too (it matches /.well-known/*).
 */
export function metadataRoutes(deps: Pick<Deps, 'config'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = deps.config.baseUrl;
  app.use('/.well-known/*', openCors());
  // RFC 9728 §3.1: the well-known path of the resource /mcp is /.well-known/oauth-protected-resource/mcp;
  // the root one serves clients that look there first.
  app.get('/.well-known/oauth-protected-resource', (c) => c.json(protectedResourceMetadata(base)));
  app.get('/.well-known/oauth-protected-resource/mcp', (c) => c.json(protectedResourceMetadata(base)));
  app.get('/.well-known/oauth-authorization-server', (c) => c.json(authorizationServerMetadata(base)));
  return app;
}
