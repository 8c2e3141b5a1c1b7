// RFC 7591 §2 client metadata rules, shared by dynamic registration and Client ID Metadata
// Documents (identity/cimd/document.ts): one definition of what a client may declare.
import type { OAuthClientRow } from '../store/oauth.ts';
import { InvalidClientMetadata, InvalidRedirectUri } from './oauth-errors.ts';
import { redirectUriProblem } from './oauth-redirect.ts';

export const SUPPORTED_SCOPES = ['mcp'] as const;
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
const EXTRA_FIELDS = [
  'client_uri',
  'logo_uri',
  'tos_uri',
  'policy_uri',
  'software_id',
  'software_version',
  'application_type',
] as const;
/** OpenID Connect Dynamic Client Registration 1.0 §2 `application_type`; MCP 2026-07-28 asks for it. */
const APPLICATION_TYPES = ['native', 'web'];

export type CheckedMetadata = Pick<
  OAuthClientRow,
  | 'client_name'
  | 'redirect_uris'
  | 'grant_types'
  | 'response_types'
  | 'token_endpoint_auth_method'
  | 'scope'
  | 'extra'
>;

/** RFC 7591 §2 field rules, with the defaults a client that omits a field gets. */
export function checkMetadata(raw: unknown): CheckedMetadata {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidClientMetadata('the body must be a JSON object of client metadata');
  }
  const m = raw as Record<string, unknown>;
  const redirectUris = stringArray(m.redirect_uris, 'redirect_uris');
  if (!redirectUris || redirectUris.length === 0) {
    throw new InvalidRedirectUri('redirect_uris must list at least one redirect URI');
  }
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidRedirectUri(`redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}`);
  }
  // DEVIATION: RFC 7591 §2 defaults grant_types to authorization_code only; this server's access
  // tokens live minutes, so a client that says nothing also gets refresh_token to stay connected.
  const grantTypes = stringArray(m.grant_types, 'grant_types') ?? ['authorization_code', 'refresh_token'];
  const badGrant = grantTypes.find((g) => !(GRANT_TYPES as readonly string[]).includes(g));
  if (badGrant) throw new InvalidClientMetadata(`grant type ${JSON.stringify(badGrant)} is not supported`);
  const responseTypes = stringArray(m.response_types, 'response_types') ?? ['code'];
  if (responseTypes.some((r) => r !== 'code'))
    throw new InvalidClientMetadata('only response type "code" is supported');
  // RFC 7591 §2.1: grant_types and response_types must agree.
  if (grantTypes.includes('authorization_code') !== responseTypes.includes('code')) {
    throw new InvalidClientMetadata('grant type authorization_code and response type code go together');
  }
  // RFC 7591 §2: the default authentication method is client_secret_basic.
  const method = m.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof method !== 'string' || !(AUTH_METHODS as readonly string[]).includes(method)) {
    throw new InvalidClientMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }
  if (m.scope !== undefined && typeof m.scope !== 'string')
    throw new InvalidClientMetadata('scope must be a string');
  // RFC 7591 §2: the server may replace the requested scope; unsupported values are dropped and
  // an empty result becomes the MCP scope, so clients asking for e.g. "openid mcp" still connect.
  const scopes = (m.scope ?? '')
    .split(' ')
    .filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s));
  const name =
    typeof m.client_name === 'string' && m.client_name.trim() !== ''
      ? m.client_name.trim()
      : 'Unnamed client';
  // Echoed back and shown nowhere else: every redirect URI still passes the same rules whatever
  // the type (a native app may use https, loopback and a private-use scheme together, as Cursor does).
  if (m.application_type !== undefined && !APPLICATION_TYPES.includes(m.application_type as string)) {
    throw new InvalidClientMetadata('application_type must be "native" or "web"');
  }
  const extra: Record<string, string> = {};
  for (const field of EXTRA_FIELDS) {
    const value = m[field];
    if (typeof value === 'string' && value.length <= 2000) extra[field] = value;
  }
  return {
    client_name: name.slice(0, 200),
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: method as OAuthClientRow['token_endpoint_auth_method'],
    scope: scopes.length > 0 ? [...new Set(scopes)].join(' ') : 'mcp',
    extra,
  };
}

function stringArray(value: unknown, field: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string') || value.length > 20) {
    const Err = field === 'redirect_uris' ? InvalidRedirectUri : InvalidClientMetadata;
    throw new Err(`${field} must be an array of at most 20 strings`);
  }
  return value as string[];
}
